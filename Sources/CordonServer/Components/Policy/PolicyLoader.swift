import CordonPolicy
import CordonStore
import CordonSystem
import CordonTrust
import Foundation

/// Where policies come from.
public struct PolicyDirectories: Sendable, Equatable {
    /// Admin files (`/etc/cordon/policy.d`): may loosen the built-in default, signed when keys are trusted.
    public var admin: String
    /// User files (`$XDG_CONFIG_HOME/cordon/policy.d`): merged with the admin files, most
    /// restrictive wins; like them they replace the default's value of a key they set.
    public var user: String
    /// Trusted Ed25519 public keys (`/etc/cordon/trust`).
    public var trust: String
    /// The admin directory as opened at start (`AdminPath`): when set, admin files are read
    /// through it, never by the name `admin` again (docs/ARCHITECTURE.md, "A policy file, from disk to a decision").
    public var openedAdmin: AdminPath?
    /// The trust directory as opened at start: when set, keys are read through it.
    public var openedTrust: AdminPath?

    public init(
        admin: String, user: String, trust: String, openedAdmin: AdminPath? = nil, openedTrust: AdminPath? = nil
    ) {
        self.admin = admin
        self.user = user
        self.trust = trust
        self.openedAdmin = openedAdmin
        self.openedTrust = openedTrust
    }

    /// What inotify watches for the admin directory: the held descriptor's when opened.
    var watchedAdmin: String { openedAdmin?.descriptorPath ?? admin }
    /// What inotify watches for the trust directory.
    var watchedTrust: String { openedTrust?.descriptorPath ?? trust }
}

/// One policy file as read: accepted with its document, or rejected with every problem.
struct LoadedPolicyFile: Sendable {
    let source: PolicySource
    let document: PolicyDocument?
    let problems: [String]
    let signedBy: String?
    /// When its signature expires (seconds since 1970); `nil` when unsigned.
    var expires: Double? = nil

    var accepted: Bool { document != nil }
}

/// Everything read from the policy directories at one moment.
struct PolicySnapshot: Sendable {
    let files: [LoadedPolicyFile]
    let trustedKeys: Int
    let trustProblems: [String]
}

/// Reads and checks policy files. Runs off the event loop (file I/O).
///
/// A user's `policy.d` is writable by every program the user runs, so a file there is read as
/// `BoundedFile` reads: regular files only (a FIFO, a device or a symbolic link to one is
/// rejected without being read), at most `maxFileBytes`, checked with `fstat` before a byte is
/// read. Each rejection names its file in the status.
///
/// Where the trust directory holds keys, an admin file needs a v2 signature (`PolicySignature`)
/// for its own name, not expired at the agent's `now`, with a serial no lower than the highest
/// one accepted for that name (kept in the database, so a rollback is refused across restarts).
enum PolicyLoader {
    /// The largest policy file read; larger files are rejected.
    static let maxFileBytes = 1 << 20
    /// The largest signature file read (a v2 signature is under 300 bytes).
    static let maxSignatureBytes = 4096

    /// Reads every policy file at time `now`; `database` holds the highest accepted serials.
    static func load(_ directories: PolicyDirectories, now: Double, database: CordonDatabase?) -> PolicySnapshot {
        let loaded = directories.openedTrust.map(loadTrust) ?? (TrustStore.load(directory: directories.trust), [])
        let trust = loaded.0
        var problems = loaded.1
        var files: [LoadedPolicyFile] = []
        var ledger = SerialLedger(database: database, now: now)
        if let opened = directories.openedAdmin {
            let (names, problem) = jsonNames(in: opened)
            if let problem { problems.append(problem) }
            for name in names {
                files.append(
                    read(
                        opened.path + "/" + name, origin: .admin, trust: trust, ledger: &ledger,
                        contents: { (file: String, limit: Int) throws(BoundedFileError) -> [UInt8] in
                            try opened.read((file as NSString).lastPathComponent, limit: limit)
                        }))
            }
        } else {
            for path in jsonFiles(in: directories.admin) {
                files.append(read(path, origin: .admin, trust: trust, ledger: &ledger))
            }
        }
        for path in jsonFiles(in: directories.user) {
            files.append(read(path, origin: .user, trust: nil, ledger: &ledger))
        }
        return PolicySnapshot(
            files: files, trustedKeys: trust.keys.count, trustProblems: problems + trust.problems)
    }

    /// `*.json` files in `directory`, sorted; none when it does not exist.
    static func jsonFiles(in directory: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.sorted().map { directory + "/" + $0 }
    }

    /// The names of the `*.json` files in the opened admin directory, sorted; none while it does
    /// not exist, and none with the reason when a component that appeared since start is not
    /// administered.
    static func jsonNames(in directory: AdminPath) -> (names: [String], problem: String?) {
        do {
            let names = try directory.entries()
            return (names.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.sorted(), nil)
        } catch {
            if error.reason == .missing { return ([], nil) }
            return ([], "\(directory.path): \(error); its files are not read")
        }
    }

    /// Every `*.pub` key of the opened trust directory, read through its descriptor.
    static func loadTrust(_ directory: AdminPath) -> (TrustStore, [String]) {
        var store = TrustStore()
        let names: [String]
        do {
            names = try directory.entries()
        } catch {
            if error.reason == .missing { return (store, []) }
            return (store, ["\(directory.path): \(error); no key is trusted from it"])
        }
        var problems: [String] = []
        for name in names.sorted() where name.hasSuffix(".pub") {
            let path = directory.path + "/" + name
            guard let bytes = try? directory.read(name, limit: maxSignatureBytes),
                let text = String(validating: bytes, as: UTF8.self)
            else {
                problems.append("\(path): unreadable")
                continue
            }
            store.add(publicKey: text, path: path)
        }
        return (store, problems)
    }

    /// Reads the policy file `path` and its signature; `contents` reads a file given its path (by
    /// default `BoundedFile` at the path; through the held descriptor for an opened directory).
    static func read(
        _ path: String, origin: PolicySource.Origin, trust: TrustStore?, ledger: inout SerialLedger,
        contents: (String, Int) throws(BoundedFileError) -> [UInt8] = {
            (path: String, limit: Int) throws(BoundedFileError) -> [UInt8] in
            try BoundedFile.read(path, limit: limit)
        }
    ) -> LoadedPolicyFile {
        let source = PolicySource(path: path, origin: origin)
        func rejected(_ problems: [String]) -> LoadedPolicyFile {
            LoadedPolicyFile(source: source, document: nil, problems: problems, signedBy: nil)
        }
        let data: [UInt8]
        do {
            data = try contents(path, maxFileBytes)
        } catch {
            return rejected([error.description])
        }
        var signature: PolicySignature?
        if let trust, trust.requiresSignatures {
            let text = try? contents(path + ".sig", maxSignatureBytes)
            do {
                let verified = try trust.verify(
                    Data(data), name: (path as NSString).lastPathComponent, now: ledger.now,
                    signature: text.map { String(decoding: $0, as: UTF8.self) })
                try ledger.check(verified)
                signature = verified
            } catch {
                return rejected(["\(path): signature: \(error)"])
            }
        }
        switch PolicyParser.parse(data, source: source) {
        case .success(let document):
            if let signature {
                do {
                    try ledger.accept(signature)
                } catch {
                    return rejected(["\(path): signature: cannot record serial \(signature.serial): \(error)"])
                }
            }
            return LoadedPolicyFile(
                source: source, document: document, problems: [], signedBy: signature?.keyId,
                expires: signature?.expires)
        case .failure(let failure):
            return rejected(failure.diagnostics.map(\.description))
        }
    }
}

/// The highest accepted serial of each signed file name, read once per load and written as
/// files are accepted. Without a database (tests of the loader alone) it remembers nothing.
struct SerialLedger {
    let database: CordonDatabase?
    let now: Double
    private var highest: [String: Int]?

    init(database: CordonDatabase?, now: Double) {
        self.database = database
        self.now = now
    }

    /// Refuses a serial lower than the highest accepted for the signature's name.
    mutating func check(_ signature: PolicySignature) throws {
        if highest == nil { highest = try database?.policySerials() ?? [:] }
        if let stored = highest?[signature.name], signature.serial < stored {
            throw PolicySignatureError.rollback(serial: signature.serial, highest: stored)
        }
    }

    /// Records an accepted signature's serial.
    mutating func accept(_ signature: PolicySignature) throws {
        guard (highest?[signature.name] ?? -1) < signature.serial else { return }
        try database?.recordPolicySerial(name: signature.name, serial: signature.serial, now: now)
        highest?[signature.name] = signature.serial
    }
}
