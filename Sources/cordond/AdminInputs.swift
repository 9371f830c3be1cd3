import CordonSystem

/// The inputs of cordond that decide what an administrator decides: where admin policy, trust
/// keys, admin settings and the prompt program come from, and the lifecycle values and KDF cost
/// of the built-in default (docs/THREAT-MODEL.md, "Admin policy").
///
/// A user controls cordond's flags and environment (its unit file is theirs), so outside test
/// mode a path given for an admin input must be administered (root's, out of every other user's
/// reach; `AdminOwnership`), and the value flags are refused outright. `--test-mode` accepts
/// them all, and says so everywhere: at start, in `cordon status` and `doctor`, and on every
/// audit record.
struct AdminInputs {
    /// An admin input taken from a path: the flag or variable that named it, and the path.
    struct PathInput {
        /// What the path names.
        enum Kind { case directory, file, program }
        var name: String
        var path: String
        var kind: Kind = .directory
    }

    /// The value flags given (`--max-attempts`, …), by name.
    var values: [String]
    /// The admin paths named by a flag or the environment.
    var paths: [PathInput]

    /// Why cordond must not start with these inputs outside test mode; nil when it may.
    func problem() -> String? {
        if !values.isEmpty {
            return "\(values.joined(separator: ", ")) set what an administrator decides; outside test mode they "
                + "come from the admin policy in /etc/cordon/policy.d"
        }
        for input in paths {
            let problem: String?
            switch input.kind {
            case .directory: problem = AdminOwnership.problem(withDirectory: input.path)
            case .file: problem = AdminOwnership.problem(with: input.path, executable: false)
            case .program: problem = AdminOwnership.problem(with: input.path, executable: true)
            }
            if let problem {
                return "\(input.name) names \(input.path), which \(problem); outside test mode an admin input "
                    + "must be root's and out of every other user's reach"
            }
        }
        return nil
    }
}
