import CordonSystem

/// The inputs of cordond that decide what an administrator decides: where admin policy, trust
/// keys, admin settings and the prompt program come from, and the lifecycle values and KDF cost
/// of the built-in default (docs/THREAT-MODEL.md, "Admin policy").
///
/// A user controls cordond's flags and environment (its unit file is theirs), so outside test
/// mode a path given for an admin input must be administered, and the value flags are refused
/// outright. Each admin path is opened once, at start, component by component without following
/// links (`AdminPath`), and read through the descriptor held from then on: a name the user can
/// retarget later, or a `/proc/PID/root/...` that means the user's own namespace, is refused
/// before anything is read. `--test-mode` accepts them all, and says so everywhere: at start, in
/// `cordon status` and `doctor`, and on every audit record.
struct AdminInputs {
    /// An admin input taken from a path: the flag or variable that named it, and the path.
    struct PathInput {
        /// What the path names.
        typealias Kind = AdminPath.Kind
        /// What cordond uses it for.
        enum Role { case adminPolicy, trust, settings, prompt, flatpak, fleet }
        var role: Role
        var name: String
        var path: String
        var kind: Kind = .directory
        /// Whether a missing tail is allowed (a default directory an administrator may create later).
        var allowMissing = false
    }

    /// Why cordond refuses to start: the message and its hint.
    struct Refusal: Error {
        var message: String
        var hint = "put these settings in an admin policy, or pass --test-mode where nothing is at stake"
    }

    /// The value flags given (`--max-attempts`, …), by name.
    var values: [String]
    /// The admin paths named by a flag or the environment (and the default directories).
    var paths: [PathInput]

    /// Opens every admin path (`AdminPath`), in the order of `paths`; the first that fails, or
    /// any value flag, refuses the start.
    func open() throws(Refusal) -> [AdminPath] {
        if !values.isEmpty {
            throw Refusal(
                message: "\(values.joined(separator: ", ")) set what an administrator decides; outside test mode they "
                    + "come from the admin policy in /etc/cordon/policy.d")
        }
        var opened: [AdminPath] = []
        for input in paths {
            do {
                opened.append(try AdminPath.open(input.path, kind: input.kind, allowMissing: input.allowMissing))
            } catch {
                throw Refusal(
                    message: "\(input.name) names \(input.path): \(error); outside test mode an admin input must be "
                        + "opened without following links, and every component be root's and out of every other "
                        + "user's reach")
            }
        }
        return opened
    }
}
