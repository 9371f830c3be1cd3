import Foundation

/// The policy files of a directory as `publish` sends them: every `*.json` and `*.json.sig`, by
/// target path `policies/<name>`, exactly as given (Cordon's signed policy files are not re-signed).
public struct FleetPolicySet: Sendable {
    /// `policies/<name>` → bytes.
    public var files: [String: [UInt8]]
    /// Policy files without a `.sig` beside them (machines that trust admin keys refuse them).
    public var unsigned: [String]

    /// Whether `name` is a plain file name a machine's policy directory takes: letters, digits,
    /// `.`, `_`, `-`, not starting with `.` or `-`.
    public static func isPlainName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first != ".", first != "-", name.count <= 200 else { return false }
        return name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "."
                || $0 == "_" || $0 == "-"
        }
    }

    /// Reads `directory`: every entry named `*.json` or `*.json.sig` must be a regular file with a
    /// plain name; a `.sig` needs its policy file; other entries are ignored.
    public init(directory: String) throws(FleetAdminError) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        } catch {
            throw FleetAdminError(
                .policy, "cannot read the policy directory \(directory)", hint: "give the directory of policy files")
        }
        var files: [String: [UInt8]] = [:]
        var policies: [String] = []
        var signatures: Set<String> = []
        for name in names where name.hasSuffix(".json") || name.hasSuffix(".json.sig") {
            let path = "\(directory)/\(name)"
            guard Self.isPlainName(name) else {
                throw FleetAdminError(
                    .policy,
                    "\(path): \"\(name.debugDescription.dropFirst().dropLast())\" is not a plain file name",
                    hint: "rename it with letters, digits, '.', '_' and '-' only, not starting with '.' or '-' "
                        + "(e.g. 10-base.json)")
            }
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                throw FleetAdminError(
                    .policy, "\(path) is not a regular file (a directory, link or device)",
                    hint: "replace it with the policy file itself")
            }
            files["policies/\(name)"] = try FleetFiles.read(path)
            if name.hasSuffix(".sig") { signatures.insert(String(name.dropLast(4))) } else { policies.append(name) }
        }
        for signed in signatures.sorted() where !policies.contains(signed) {
            throw FleetAdminError(
                .policy, "\(directory)/\(signed).sig has no \(signed) beside it",
                hint: "add the policy file it signs, or remove the stale signature")
        }
        guard !policies.isEmpty else {
            throw FleetAdminError(
                .policy, "\(directory) holds no *.json policy file",
                hint: "give the directory holding the policy files (and their .sig files)")
        }
        self.files = files
        unsigned = policies.filter { !signatures.contains($0) }
    }
}
