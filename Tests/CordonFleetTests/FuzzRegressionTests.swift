import CordonProtocol
import Foundation

@testable import CordonFleet

#if !CORDON_FUZZER
    import Testing
#endif

// The invariants the `tuf` libFuzzer target in `Fuzz/` asserts. This file is compiled twice: into
// the test target (the suite at the end replays the committed corpus and regressions with the real
// swift-crypto) and, with `-D CORDON_FUZZER`, into the fuzzer by `scripts/fuzz.sh` (with
// Fuzz/Shims/CryptoShim.swift standing in for swift-crypto, whose signatures the fuzzer can make).
// Each check returns nil when every invariant holds and a description of the first broken one.

/// A trusted root, then what a server serves, then a target file: the pieces of one input,
/// separated by `\n--\n`.
enum TUFFuzzCheck {
    static let separator = Array("\n--\n".utf8)

    static func pieces(_ input: [UInt8]) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var start = 0
        var index = 0
        while index + separator.count <= input.count {
            if Array(input[index..<(index + separator.count)]) == separator {
                out.append(Array(input[start..<index]))
                index += separator.count
                start = index
            } else {
                index += 1
            }
        }
        out.append(Array(input[start...]))
        return out
    }

    static func check(_ input: [UInt8]) -> String? {
        let parts = pieces(input)
        func piece(_ index: Int) -> [UInt8]? { index < parts.count ? parts[index] : nil }
        if let problem = canonicalProblem(parts[0]) { return problem }
        if let problem = commandProblem(piece(6) ?? parts[0]) { return problem }
        if let problem = statusProblem(parts[0]) { return problem }
        if let problem = dateProblem(parts[0]) { return problem }
        _ = try? FleetReport.verify(parts[0])
        guard let trusted = try? TUFTrustedSet(root: parts[0]) else { return nil }
        let before = trusted.versions
        var refresh = TUFRefresh(trusted: trusted, now: Date(timeIntervalSince1970: 1_800_000_000))
        var step = refresh.start()
        var fetches = 0
        var rootServed = false
        while case .fetch(let fetch) = step {
            fetches += 1
            if fetches > TUFRefresh.Limits.maximumRootRotations + TUFRefresh.Limits.maximumDelegatedRoles + 8 {
                return "the refresh asked for \(fetches) files"
            }
            if fetch.maximumLength <= 0 { return "a fetch of \(fetch.path) with a cap of \(fetch.maximumLength)" }
            let served: [UInt8]?
            if fetch.path.hasSuffix(".root.json") {
                served = rootServed ? nil : piece(1)
                rootServed = true
            } else if fetch.path == "timestamp.json" {
                served = piece(2)
            } else if fetch.path.hasSuffix("snapshot.json") {
                served = piece(3)
            } else if fetch.path.hasSuffix(".targets.json") || fetch.path == "targets.json" {
                served = piece(4)
            } else {
                served = piece(5)
            }
            step = refresh.receive(served.map { .data($0) } ?? .notFound)
        }
        guard case .finished(let outcome) = step else { return "the refresh neither fetched nor finished" }
        switch outcome {
        case .refused(let error):
            if error.role.isEmpty || (error.detail.isEmpty && error.kind != .transport) {
                return "an empty refusal: \(error)"
            }
        case .updated(let set), .unchanged(let set):
            if let root = set.versions["root"], let old = before["root"], root < old { return "root went back" }
            if set.timestamp == nil || set.snapshot == nil || set.targets["targets"] == nil {
                return "accepted without timestamp, snapshot or targets"
            }
            if let timestamp = set.timestamp,
                timestamp.envelope.isExpired(at: Date(timeIntervalSince1970: 1_800_000_000))
            {
                return "accepted an expired timestamp"
            }
            for (path, file) in set.allTargets {
                guard set.target(path) == file else { return "\(path) resolves differently than listed" }
                if let bytes = piece(6) {
                    do { try file.verify(bytes) } catch {
                        if error.kind != .length && error.kind != .hash { return "a target refused as \(error.kind)" }
                    }
                }
            }
            var again = set
            again.load(persisted: set.files, verifiedAt: set.verifiedAt)
            if again.versions != set.versions {
                return "persisted files load back as \(again.versions), not \(set.versions)"
            }
        }
        return nil
    }

    /// Canonical JSON is a fixed point: what it writes parses and writes again to the same bytes.
    /// (Canonical JSON writes a control character in a string as the raw byte, which strict JSON
    /// does not read: such a document is signed and verified, never read back.)
    static func canonicalProblem(_ bytes: [UInt8]) -> String? {
        guard let value = try? CanonicalJSON.parse(bytes, role: "fuzz"),
            let encoded = try? CanonicalJSON.encode(value, role: "fuzz"), !encoded.contains(where: { $0 < 0x20 })
        else { return nil }
        guard let reparsed = try? CanonicalJSON.parse(encoded, role: "fuzz") else {
            return "canonical JSON does not parse back"
        }
        guard (try? CanonicalJSON.encode(reparsed, role: "fuzz")) == encoded else {
            return "canonical JSON is not a fixed point"
        }
        return nil
    }

    static func commandProblem(_ bytes: [UInt8]) -> String? {
        guard let file = try? FleetCommandFile(bytes) else { return nil }
        if zip(file.commands, file.commands.dropFirst()).contains(where: { $0.counter > $1.counter }) {
            return "commands out of order"
        }
        if file.commands.contains(where: { $0.counter < 1 || $0.machines < 1 }) {
            return "a command without counter or device"
        }
        guard let again = try? FleetCommandFile(file.bytes), again == file else {
            return "a command file does not read back"
        }
        return nil
    }

    static func statusProblem(_ bytes: [UInt8]) -> String? {
        guard let status = try? FleetHandoff.Status(bytes) else { return nil }
        guard let again = try? FleetHandoff.Status(status.bytes), again == status else {
            return "a status does not read back"
        }
        return nil
    }

    static func dateProblem(_ bytes: [UInt8]) -> String? {
        guard let date = TUFDate.parse(String(decoding: bytes.prefix(20), as: UTF8.self)) else { return nil }
        guard TUFDate.parse(TUFDate.format(date)) == date else { return "\(date) does not format and parse back" }
        return nil
    }
}

#if !CORDON_FUZZER
    /// Replays the `tuf` fuzzer's committed corpus and regressions through its checks.
    @Suite struct TUFFuzzRegressionTests {
        static let fuzz = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz")

        static var inputs: [URL] {
            ["corpus/tuf", "regressions/tuf"].flatMap { directory in
                let url = fuzz.appendingPathComponent(directory)
                return ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
                    .map { url.appendingPathComponent($0) }
            }
        }

        @Test func everyCommittedInputKeepsTheInvariants() throws {
            #expect(!Self.inputs.isEmpty)
            for url in Self.inputs {
                let problem = TUFFuzzCheck.check(Array(try Data(contentsOf: url)))
                #expect(problem == nil, "\(url.lastPathComponent): \(problem ?? "")")
            }
        }
    }
#endif
