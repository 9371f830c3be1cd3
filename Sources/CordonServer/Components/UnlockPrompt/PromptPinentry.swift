import CordonSystem
import Foundation

/// The pinentry program the implicit-unlock prompt runs: the `"pinentry"` of the admin settings
/// file (`/etc/cordon/settings.json`), else `pinentry` on a fixed system path. Never `$PINENTRY`
/// or the user's `settings.json`: a program running as the user can write those, and would get
/// the passcode typed into a prompt the agent showed (docs/ARCHITECTURE.md, "Components").
///
/// Both the settings file and the program are opened as `AdminPath` opens admin inputs: component
/// by component, no symbolic or `/proc` magic link followed, each component root's and writable
/// by no one else (a sticky directory such as `/tmp` above them excepted). The program is then
/// run through the descriptor opened (`UnlockPromptComponent`), so what runs is what was checked.
/// The fixed system path alone may reach its program through root's links (the alternatives of
/// `/usr/bin/pinentry`): they are resolved first, and what they lead to is opened the same way.
enum PromptPinentry {
    /// Where `pinentry` is looked for when the admin settings name none.
    static let systemPath = ["/usr/local/bin", "/usr/bin", "/bin"]

    /// The settings file's key.
    static let settingsKey = "pinentry"

    /// The largest admin settings file read.
    static let maxSettingsBytes = 1 << 16

    /// The program to run, opened, or the reason none can be (for `UnlockUnavailable`).
    /// `opened` is the settings file as cordond opened it at start, when it was named.
    static func resolve(adminSettings: String, opened: AdminPath? = nil, searchPath: [String] = systemPath)
        -> Result<AdminPath, Problem>
    {
        if let named = named(adminSettings: adminSettings, opened: opened) { return named }
        for directory in searchPath {
            let candidate = directory + "/pinentry"
            guard let real = realpath(candidate, nil) else { continue }
            let resolved = String(cString: real)
            free(real)
            do {
                return .success(try AdminPath.open(resolved, kind: .program))
            } catch {
                let shown = resolved == candidate ? candidate : "\(candidate) (\(resolved))"
                return .failure(Problem("the pinentry \(shown): \(error)"))
            }
        }
        return .failure(
            Problem(
                "no pinentry: \(adminSettings) names none and none is installed in "
                    + searchPath.joined(separator: ":")))
    }

    /// The program the admin settings name, opened, or why it cannot be; nil when there are no
    /// admin settings or they name no pinentry.
    static func named(adminSettings: String, opened: AdminPath?) -> Result<AdminPath, Problem>? {
        var settingsFile = opened
        if settingsFile == nil {
            do {
                settingsFile = try AdminPath.open(adminSettings, kind: .file)
            } catch  where error.reason == .missing {
                settingsFile = nil
            } catch {
                return .failure(Problem("\(adminSettings): \(error)"))
            }
        }
        if let settingsFile {
            do {
                try settingsFile.verifyHeld()
            } catch {
                return .failure(Problem("\(adminSettings): \(error) (it was root's when opened)"))
            }
            let data: [UInt8]
            do {
                data = try settingsFile.readFile(limit: maxSettingsBytes)
            } catch {
                return .failure(Problem("\(error)"))
            }
            let object = try? JSONSerialization.jsonObject(with: Data(data))
            guard let settings = object as? [String: Any] else {
                return .failure(Problem("\(adminSettings) is not a JSON object"))
            }
            if let value = settings[settingsKey] {
                guard let program = value as? String, program.hasPrefix("/") else {
                    return .failure(Problem("\(adminSettings): \"\(settingsKey)\" must be an absolute path"))
                }
                do {
                    return .success(try AdminPath.open(program, kind: .program))
                } catch {
                    return .failure(Problem("the pinentry \(program) (from \(adminSettings)): \(error)"))
                }
            }
        }
        return nil
    }

    /// Why no pinentry can be run.
    struct Problem: Error, Equatable, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

extension AgentConfiguration {
    /// Why the pinentry the admin settings opened at start name cannot be run, or nil (also when
    /// they name none): cordond refuses to start on it (docs/THREAT-MODEL.md, "Admin policy").
    public var adminSettingsProblem: String? {
        guard let opened = openedAdminSettings else { return nil }
        if case .failure(let problem) = PromptPinentry.named(adminSettings: adminSettingsPath, opened: opened) {
            return problem.description
        }
        return nil
    }
}
