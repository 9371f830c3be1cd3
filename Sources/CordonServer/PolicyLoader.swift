import CordonPolicy
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

    public init(admin: String, user: String, trust: String) {
        self.admin = admin
        self.user = user
        self.trust = trust
    }
}

/// One policy file as read: accepted with its document, or rejected with every problem.
struct LoadedPolicyFile: Sendable {
    let source: PolicySource
    let document: PolicyDocument?
    let problems: [String]
    let signedBy: String?

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
enum PolicyLoader {
    /// The largest policy file read; larger files are rejected.
    static let maxFileBytes = 1 << 20
    /// The largest signature file read (an Ed25519 signature in base64 is under 100 bytes).
    static let maxSignatureBytes = 4096

    static func load(_ directories: PolicyDirectories) -> PolicySnapshot {
        let trust = TrustStore.load(directory: directories.trust)
        var files: [LoadedPolicyFile] = []
        for path in jsonFiles(in: directories.admin) {
            files.append(read(path, origin: .admin, trust: trust))
        }
        for path in jsonFiles(in: directories.user) {
            files.append(read(path, origin: .user, trust: nil))
        }
        return PolicySnapshot(files: files, trustedKeys: trust.keys.count, trustProblems: trust.problems)
    }

    /// `*.json` files in `directory`, sorted; none when it does not exist.
    static func jsonFiles(in directory: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.sorted().map { directory + "/" + $0 }
    }

    static func read(_ path: String, origin: PolicySource.Origin, trust: TrustStore?) -> LoadedPolicyFile {
        let source = PolicySource(path: path, origin: origin)
        func rejected(_ problems: [String]) -> LoadedPolicyFile {
            LoadedPolicyFile(source: source, document: nil, problems: problems, signedBy: nil)
        }
        let data: [UInt8]
        do {
            data = try BoundedFile.read(path, limit: maxFileBytes)
        } catch {
            return rejected([error.description])
        }
        var signedBy: String?
        if let trust, trust.requiresSignatures {
            let signature = try? BoundedFile.read(path + ".sig", limit: maxSignatureBytes)
            do {
                signedBy = try trust.verify(
                    Data(data), signature: signature.map { String(decoding: $0, as: UTF8.self) })
            } catch {
                return rejected(["\(path): signature: \(error)"])
            }
        }
        switch PolicyParser.parse(data, source: source) {
        case .success(let document):
            return LoadedPolicyFile(source: source, document: document, problems: [], signedBy: signedBy)
        case .failure(let failure):
            return rejected(failure.diagnostics.map(\.description))
        }
    }
}
