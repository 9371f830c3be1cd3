import CordonFleet
import Crypto
import Foundation

/// Installs the repository's policy files (`policies/<name>` targets) into the admin policy
/// directory: every changed file downloaded and verified first, then written atomically (signature
/// files before the documents they sign), then the files fleetd installed earlier and the
/// repository no longer lists removed. Files fleetd did not install are never touched.
struct PolicyInstaller {
    let directory: String

    /// A file the repository lists that fleetd will not install, and why.
    struct Skipped: Sendable { var path: String; var reason: String }

    /// The policy targets of `set`, by file name, and the ones refused for their names.
    static func policies(in set: TUFTrustedSet) -> (files: [String: TUFTargetFile], skipped: [Skipped]) {
        var files: [String: TUFTargetFile] = [:]
        var skipped: [Skipped] = []
        for (path, file) in set.allTargets where path.hasPrefix("policies/") {
            let name = String(path.dropFirst("policies/".count))
            if isPlainName(name), name.hasSuffix(".json") || name.hasSuffix(".json.sig") {
                files[name] = file
            } else {
                skipped.append(
                    Skipped(path: path, reason: "not a policy file name (NAME.json or NAME.json.sig, no directories)"))
            }
        }
        return (files, skipped)
    }

    static func isPlainName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first != ".", !name.contains(".."), name.count <= 200 else {
            return false
        }
        return name.unicodeScalars.allSatisfy { scalar in
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                || scalar == "." || scalar == "-" || scalar == "_"
        }
    }

    /// Installs `downloads` (verified bytes by name), removes what `installed` has and `wanted` lacks;
    /// returns the new `installed` map.
    func install(_ downloads: [String: [UInt8]], wanted: [String: TUFTargetFile], installed: [String: String])
        throws(FleetdError) -> [String: String]
    {
        try AtomicFile.makeDirectory(directory, mode: 0o755)
        var result = installed
        // Signatures first: an agent that reloads in between sees the new signature with the old
        // document, refuses that pair and keeps its last good policy, then takes the new pair.
        for name in downloads.keys.sorted(by: {
            ($0.hasSuffix(".sig") ? 0 : 1, $0) < ($1.hasSuffix(".sig") ? 0 : 1, $1)
        }) {
            guard let bytes = downloads[name] else { continue }
            try AtomicFile.write(bytes, to: directory + "/" + name, mode: 0o644)
            result[name] = TUFHex.encode(SHA256.hash(data: bytes))
        }
        // Documents before their signatures: a document never stays behind without its signature.
        for name in installed.keys.sorted(by: {
            ($0.hasSuffix(".sig") ? 1 : 0, $0) < ($1.hasSuffix(".sig") ? 1 : 0, $1)
        })
        where wanted[name] == nil {
            try AtomicFile.remove(directory + "/" + name)
            result[name] = nil
        }
        return result
    }
}
