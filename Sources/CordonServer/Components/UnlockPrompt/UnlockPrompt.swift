import CordonLifecycle
import CordonProtocol
import CordonSystem
import Foundation

/// The prompt `RequestUnlock` starts: `cordon unlock --pinentry-only` with the pinentry, the
/// requester and the display the agent chose, none of them taken from the caller
/// (docs/ARCHITECTURE.md, "Components": `UnlockPromptComponent`).
struct UnlockPrompt: Equatable, Sendable {
    /// Who asked, as the prompt names it: only a registration the caller's own process made.
    enum Requester: Equatable, Sendable {
        /// A registered app the policy manages.
        case managed(String)
        /// A registered app the policy does not manage: the prompt says so.
        case unmanaged(String)
        /// A caller with no registration of its own: the prompt names no app.
        case unregistered

        /// `cordon unlock`'s arguments naming it.
        var arguments: [String] {
            switch self {
            case .managed(let appId): return ["--requested-by", appId]
            case .unmanaged(let appId): return ["--requested-by", appId, "--unmanaged"]
            case .unregistered: return ["--unregistered"]
            }
        }

        /// As the log shows it.
        var logName: String {
            switch self {
            case .managed(let appId): return appId
            case .unmanaged(let appId): return "\(appId) (unmanaged)"
            case .unregistered: return "an unregistered client"
            }
        }
    }

    /// The program to run (`cordon`).
    var program: String
    var socketPath: String
    /// The pinentry, chosen by the agent (`PromptPinentry`), as named.
    var pinentry: String
    var requester: Requester
    var display: PromptDisplay
    /// The pinentry as opened and checked: the prompt gets it as its standard input and runs
    /// that file (`--pinentry-from-stdin`), so what runs is what was checked.
    var pinentryProgram: AdminPath?

    /// The prompt program's arguments.
    var arguments: [String] {
        ["--socket", socketPath, "unlock", "--pinentry-only", "--pinentry", pinentry]
            + (pinentryProgram != nil ? ["--pinentry-from-stdin"] : []) + requester.arguments
    }

    /// Variables of the agent's environment the prompt never gets: what names another pinentry
    /// or settings file, and what systemd gave the agent alone.
    static let withheld = [
        "PINENTRY", "CORDON_CONFIG_DIR", "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES",
        "WATCHDOG_USEC", "WATCHDOG_PID",
    ]

    /// The prompt's environment: the agent's own at start, without what it withholds, with the
    /// display chosen for it.
    func environment(agent: [String: String]) -> [String: String] {
        var environment = agent
        for key in Self.withheld { environment.removeValue(forKey: key) }
        display.apply(to: &environment)
        return environment
    }

    /// The requester for a `RequestUnlock` on `connection` from process `pid`: the registration on
    /// that connection, else one the same process made (the SDK asks on a connection of its own),
    /// preferring the one whose id it `claimed`. The claim alone names nothing.
    static func requester(
        connection: ConnectionID, pid: Int, claimed: String?, registrations: [ConnectionID: AppRegistration]
    ) -> Requester {
        var verified = registrations[connection]
        if verified == nil, pid > 0 {
            let own = registrations.values.filter { $0.ownerPid == pid || $0.pid == pid }
            verified = own.first { $0.appId == claimed } ?? (own.count == 1 ? own.first : nil)
        }
        guard let verified, AppIdentifier.problem(with: verified.appId) == nil else { return .unregistered }
        return verified.managed ? .managed(verified.appId) : .unmanaged(verified.appId)
    }
}
