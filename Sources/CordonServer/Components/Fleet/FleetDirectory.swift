import CCordonLinux
import CordonFleet
import CordonSystem
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// cordon-fleetd's directory as the agent reads it (docs/ARCHITECTURE.md, "Fleet commands in the
/// agent"): `status.json` and `commands/<counter>.json`, root's. Outside test mode it is read
/// through the descriptor cordond opened at start (`AdminPath`), and `commands/` is opened below it
/// without following a link and checked root's and out of every other user's reach at each read.
struct FleetDirectory: Sendable {
    /// The largest command or status file read.
    static let maxFileBytes = 64 * 1024
    /// The most command files read in one pass.
    static let maxCommands = 4096

    /// The directory as named (`--fleet-dir`, `CORDON_FLEET_DIR`, `/var/lib/cordon/fleet`).
    var path: String
    /// The directory as opened at start (outside test mode).
    var opened: AdminPath?

    /// What inotify watches: the directory (through the held descriptor when opened) and `commands/`.
    var watched: [String] {
        let base = opened?.descriptorPath ?? path
        return [base, base + "/" + FleetHandoff.commandsDirectory]
    }

    /// One command file.
    struct Entry: Sendable {
        var name: String
        var counter: Int
        /// The command and the device it was verified for, or why it could not be read.
        var parsed: Result<(command: FleetCommand, device: String), ReadFailure>
    }

    /// Why a file could not be read or parsed.
    struct ReadFailure: Error, Sendable, CustomStringConvertible {
        var description: String
    }

    /// Everything read at one moment.
    struct Reading: Sendable {
        /// Whether the directory exists.
        var exists = false
        /// `status.json`, or nil when missing or unreadable (`statusProblem` says which).
        var status: FleetHandoff.Status?
        var statusProblem: String?
        /// Whether `commands/` exists.
        var commandsExist = false
        /// The command files, ascending by counter.
        var entries: [Entry] = []
        /// What could not be read of `commands/`.
        var problem: String?

        /// The highest counter present in `commands/` (0 when none).
        var highestCounter: Int { entries.map(\.counter).max() ?? 0 }
    }

    /// Reads the directory (file I/O: off the loop).
    func read() -> Reading {
        var reading = Reading()
        let directory: Int32
        if let opened {
            do {
                directory = try opened.open()
            } catch {
                if error.reason != .missing { reading.problem = "\(path): \(error)" }
                return reading
            }
        } else {
            directory = open(path, cordon_o_path() | O_DIRECTORY | O_CLOEXEC)
            guard directory >= 0 else {
                if errno != ENOENT { reading.problem = "\(path): \(String(cString: strerror(errno)))" }
                return reading
            }
        }
        defer { close(directory) }
        reading.exists = true
        do {
            let bytes = try BoundedFile.read(
                at: directory, FleetHandoff.statusFile, shownAs: path + "/" + FleetHandoff.statusFile,
                limit: Self.maxFileBytes)
            reading.status = try FleetHandoff.Status(bytes)
        } catch let error as BoundedFileError {
            reading.statusProblem = "\(error)"
        } catch {
            reading.statusProblem = "\(path)/\(FleetHandoff.statusFile): \(error)"
        }
        readCommands(below: directory, into: &reading)
        return reading
    }

    private func readCommands(below directory: Int32, into reading: inout Reading) {
        let shown = path + "/" + FleetHandoff.commandsDirectory
        let commands = openat(directory, FleetHandoff.commandsDirectory, cordon_o_path() | O_NOFOLLOW | O_CLOEXEC)
        guard commands >= 0 else {
            if errno != ENOENT { reading.problem = "\(shown): \(String(cString: strerror(errno)))" }
            return
        }
        defer { close(commands) }
        var info = stat()
        guard fstat(commands, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            reading.problem = "\(shown) is not a directory"
            return
        }
        // Opened through the held admin path: it must be root's and writable by no one else too.
        if opened != nil, info.st_uid != 0 || info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
            reading.problem = "\(shown) is not root's, or is writable by others: its commands are not read"
            return
        }
        reading.commandsExist = true
        let listing = openat(commands, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard listing >= 0, let stream = fdopendir(listing) else {
            if listing >= 0 { close(listing) }
            reading.problem = "\(shown): \(String(cString: strerror(errno)))"
            return
        }
        var names: [(String, Int)] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if let counter = Self.counter(ofFileNamed: name) { names.append((name, counter)) }
        }
        closedir(stream)
        names.sort { $0.1 < $1.1 }
        if names.count > Self.maxCommands {
            reading.problem = "\(shown) holds \(names.count) command files; the first \(Self.maxCommands) are read"
            names = Array(names.prefix(Self.maxCommands))
        }
        for (name, counter) in names {
            let parsed: Result<(command: FleetCommand, device: String), ReadFailure>
            do {
                let bytes = try BoundedFile.read(
                    at: commands, name, shownAs: shown + "/" + name, limit: Self.maxFileBytes)
                parsed = .success(try FleetHandoff.command(bytes))
            } catch let error as BoundedFileError {
                parsed = .failure(ReadFailure(description: "\(error)"))
            } catch {
                parsed = .failure(ReadFailure(description: "\(shown)/\(name): \(error)"))
            }
            reading.entries.append(Entry(name: name, counter: counter, parsed: parsed))
        }
    }

    /// The counter a command file's name gives (`000000000012.json` → 12); nil for any other name
    /// (fleetd's temporary files, `.json.tmp`).
    static func counter(ofFileNamed name: String) -> Int? {
        guard name.hasSuffix(".json") else { return nil }
        let digits = name.dropLast(5)
        guard digits.count == 12, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let counter = Int(digits),
            counter > 0
        else { return nil }
        return counter
    }
}
