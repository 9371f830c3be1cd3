import CordonSystem
import Foundation

/// Where the implicit-unlock prompt is shown: the display and terminal of the user's logind
/// session, else of the agent's own environment at start, never the caller's environment or
/// descriptors (docs/ARCHITECTURE.md, "Components": `UnlockPromptComponent`).
struct PromptDisplay: Equatable, Sendable {
    /// `DISPLAY`: the session's X11 display.
    var display: String?
    /// `WAYLAND_DISPLAY` (with `XDG_RUNTIME_DIR`): the agent's, in a Wayland session.
    var waylandDisplay: String?
    var runtimeDirectory: String?
    /// `XAUTHORITY`: the agent's, when there is an X11 display.
    var xauthority: String?
    /// The terminal pinentry-curses may ask on (`/dev/tty2`, `/dev/pts/3`).
    var tty: String?
    /// Where these came from, for the log and for an error: `logind session PATH (TYPE)` or
    /// `the agent's environment`.
    var source: String

    /// The variables the prompt process gets for its display.
    static let variables = ["DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "CORDON_PROMPT_TTY"]

    /// Whether pinentry has anything to ask on.
    var isEmpty: Bool { display == nil && waylandDisplay == nil && tty == nil }

    /// The display of `session`: `DISPLAY` from its `Display`, the terminal from its `TTY`, and
    /// for a Wayland session the agent's `WAYLAND_DISPLAY` and `XDG_RUNTIME_DIR` (logind does not
    /// know the session's environment). `terminal` vets the terminal's path.
    static func session(
        _ session: LogindSession, agent: [String: String], terminal: (String) -> String? = Self.verifiedTerminal
    ) -> PromptDisplay {
        var result = PromptDisplay(source: "logind session \(session.path) (\(session.type))")
        result.display = nonEmpty(session.display)
        if session.type == "wayland" {
            result.waylandDisplay = nonEmpty(agent["WAYLAND_DISPLAY"])
            result.runtimeDirectory = result.waylandDisplay == nil ? nil : nonEmpty(agent["XDG_RUNTIME_DIR"])
        }
        if result.display != nil { result.xauthority = nonEmpty(agent["XAUTHORITY"]) }
        if let tty = nonEmpty(session.tty) {
            result.tty = terminal(tty.hasPrefix("/") ? tty : "/dev/" + tty)
        }
        return result
    }

    /// Without logind: the display variables of the agent's own environment at start (set by the
    /// user's session manager or systemd user manager). No terminal: only logind names one.
    static func agent(_ environment: [String: String]) -> PromptDisplay {
        PromptDisplay(
            display: nonEmpty(environment["DISPLAY"]), waylandDisplay: nonEmpty(environment["WAYLAND_DISPLAY"]),
            runtimeDirectory: nonEmpty(environment["XDG_RUNTIME_DIR"]), xauthority: nonEmpty(environment["XAUTHORITY"]),
            tty: nil, source: "the agent's environment")
    }

    /// Sets these in `environment`, removing every display variable it had.
    func apply(to environment: inout [String: String]) {
        for key in Self.variables { environment.removeValue(forKey: key) }
        environment["DISPLAY"] = display
        environment["WAYLAND_DISPLAY"] = waylandDisplay
        environment["XAUTHORITY"] = xauthority
        environment["CORDON_PROMPT_TTY"] = tty
        if let runtimeDirectory { environment["XDG_RUNTIME_DIR"] = runtimeDirectory }
    }

    /// `path` when it is a terminal pinentry may use: `/dev/ttyN` or `/dev/pts/N`, a character
    /// device owned by this user.
    static func verifiedTerminal(_ path: String) -> String? {
        let name = path.dropFirst("/dev/".count)
        let number = name.hasPrefix("pts/") ? name.dropFirst(4) : name.hasPrefix("tty") ? name.dropFirst(3) : ""
        guard path.hasPrefix("/dev/"), !number.isEmpty, number.allSatisfy(\.isASCII), number.allSatisfy(\.isNumber)
        else { return nil }
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFCHR, info.st_uid == getuid() else { return nil }
        return path
    }

    private static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}
