import CordonKit
import CordonProtocol
import Foundation

/// Which pinentry program to run, and whether there is a display or terminal for it to ask on.
///
/// The program is the one given (`--pinentry`: cordond names the pinentry it chose for an app's
/// implicit unlock, and neither the environment nor the user's settings can replace it), else the
/// first of: `$PINENTRY`, the `"pinentry"` key of the settings file
/// (`$CORDON_CONFIG_DIR/settings.json`, else `$XDG_CONFIG_HOME/cordon/settings.json`, else
/// `~/.config/cordon/settings.json`), `pinentry` on `PATH`. A name without a slash is looked up on `PATH`.
/// The user's own `cordon unlock` honours `$PINENTRY` and the settings file: the user started it,
/// in their own terminal and environment.
public struct PinentryProgram: Equatable, Sendable {
    /// The program's path.
    public var path: String
    /// The terminal pinentry may ask on (`OPTION ttyname`), when standard input is one.
    public var ttyName: String?
    /// The terminal type (`OPTION ttytype`), from `TERM`.
    public var ttyType: String?
    /// The program opened by cordond, run through this descriptor rather than by `path`
    /// (`cordon unlock --pinentry-from-stdin`).
    public var descriptor: Int32? = nil

    /// The program to use, or `nil` when none is configured or found, or when there is neither a
    /// display (`DISPLAY`, `WAYLAND_DISPLAY`) nor a terminal to ask on. `program` (an absolute
    /// path) is used as it is, without looking at `$PINENTRY` or the settings file.
    public static func find(
        environment: [String: String] = ProcessInfo.processInfo.environment, program: String? = nil,
        descriptor: Int32? = nil
    ) throws -> PinentryProgram? {
        // cordond's implicit-unlock prompt has no terminal of its own: it names the requester's.
        let ttyName =
            isatty(STDIN_FILENO) == 1
            ? ttyname(STDIN_FILENO).map { String(cString: $0) } : nonEmpty(environment["CORDON_PROMPT_TTY"])
        let hasDisplay = ["DISPLAY", "WAYLAND_DISPLAY"].contains { !(environment[$0] ?? "").isEmpty }
        guard hasDisplay || ttyName != nil else { return nil }
        let path: String
        if let program {
            let checked = descriptor.map { "/proc/self/fd/\($0)" } ?? program
            guard program.hasPrefix("/"), FileManager.default.isExecutableFile(atPath: checked) else {
                throw ErrorText(
                    "the pinentry program '\(program)' (from --pinentry) is not an executable file",
                    hint: "give the absolute path of an installed pinentry, e.g. /usr/bin/pinentry")
            }
            path = program
        } else if let configured = nonEmpty(environment["PINENTRY"]) {
            path = try resolve(configured, from: "PINENTRY", environment: environment)
        } else if let configured = try settingsValue(environment: environment) {
            path = try resolve(configured, from: settingsPath(environment: environment), environment: environment)
        } else if let found = lookUp("pinentry", environment: environment) {
            path = found
        } else {
            return nil
        }
        let ttyType = ttyName == nil ? nil : nonEmpty(environment["TERM"])
        return PinentryProgram(
            path: path, ttyName: ttyName, ttyType: ttyType, descriptor: program.flatMap { _ in descriptor })
    }

    /// The settings file's path.
    public static func settingsPath(environment: [String: String]) -> String {
        CordonPaths.resolve(environment: environment, uid: UInt32(getuid())).configDirectory + "/settings.json"
    }

    /// The `"pinentry"` string of the settings file, or `nil` when the file or the key is absent.
    private static func settingsValue(environment: [String: String]) throws -> String? {
        let path = settingsPath(environment: environment)
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let object = try? JSONSerialization.jsonObject(with: data)
        guard let settings = object as? [String: Any] else {
            throw ErrorText(
                "\(path) is not a JSON object", hint: "fix the file, e.g. {\"pinentry\": \"/usr/bin/pinentry\"}")
        }
        guard let value = settings["pinentry"] else { return nil }
        guard let program = value as? String else {
            throw ErrorText("\(path): \"pinentry\" must be a string", hint: "give the program's name or path")
        }
        return nonEmpty(program)
    }

    /// `program` as an executable path, or an error naming where it was configured.
    private static func resolve(_ program: String, from source: String, environment: [String: String]) throws -> String
    {
        if program.contains("/") {
            if FileManager.default.isExecutableFile(atPath: program) { return program }
        } else if let found = lookUp(program, environment: environment) {
            return found
        }
        throw ErrorText(
            "the pinentry program '\(program)' (from \(source)) is not an executable file",
            hint: "fix \(source), or add --no-pinentry to type the passcode on the terminal")
    }

    /// The first executable `name` in the directories of `PATH`.
    private static func lookUp(_ name: String, environment: [String: String]) -> String? {
        let directories = (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":")
        for directory in directories where !directory.isEmpty {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    private static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}
