import CordonSystem
import Foundation

/// The pinentry program the implicit-unlock prompt runs: the `"pinentry"` of the admin settings
/// file (`/etc/cordon/settings.json`), else `pinentry` on a fixed system path. Never `$PINENTRY`
/// or the user's `settings.json`: a program running as the user can write those, and would get
/// the passcode typed into a prompt the agent showed (docs/ARCHITECTURE.md, "Components").
///
/// Both the settings file and the program must be administered: owned by root, not writable by
/// group or others, in directories that are too (up to `/`; a sticky directory such as `/tmp`
/// may be writable by others).
enum PromptPinentry {
    /// Where `pinentry` is looked for when the admin settings name none.
    static let systemPath = ["/usr/local/bin", "/usr/bin", "/bin"]

    /// The settings file's key.
    static let settingsKey = "pinentry"

    /// The program to run, or the reason none can be (for `UnlockUnavailable`).
    static func resolve(adminSettings: String, searchPath: [String] = systemPath) -> Result<String, Problem> {
        if let data = FileManager.default.contents(atPath: adminSettings) {
            if let problem = AdminOwnership.problem(with: adminSettings, executable: false) {
                return .failure(Problem("\(adminSettings) \(problem)"))
            }
            let object = try? JSONSerialization.jsonObject(with: data)
            guard let settings = object as? [String: Any] else {
                return .failure(Problem("\(adminSettings) is not a JSON object"))
            }
            if let value = settings[settingsKey] {
                guard let program = value as? String, program.hasPrefix("/") else {
                    return .failure(Problem("\(adminSettings): \"\(settingsKey)\" must be an absolute path"))
                }
                if let problem = AdminOwnership.problem(with: program, executable: true) {
                    return .failure(Problem("the pinentry \(program) (from \(adminSettings)) \(problem)"))
                }
                return .success(program)
            }
        }
        for directory in searchPath {
            let candidate = directory + "/pinentry"
            guard FileManager.default.fileExists(atPath: candidate) else { continue }
            if let problem = AdminOwnership.problem(with: candidate, executable: true) {
                return .failure(Problem("the pinentry \(candidate) \(problem)"))
            }
            return .success(candidate)
        }
        return .failure(
            Problem(
                "no pinentry: \(adminSettings) names none and none is installed in "
                    + searchPath.joined(separator: ":")))
    }

    /// Why no pinentry can be run.
    struct Problem: Error, Equatable, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
