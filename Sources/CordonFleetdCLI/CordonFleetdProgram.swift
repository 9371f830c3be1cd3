/// The `cordon-fleetd` program, for an executable to run: the thin `cordon-fleetd` (tests, `swift
/// run`) and the multi-call binary when run as `cordon-fleetd` (docs/ARCHITECTURE.md, "Binaries").
public enum CordonFleetdProgram {
    /// Parses `arguments` (nil: the process's own, without its name) and runs the command.
    public static func main(_ arguments: [String]? = nil) async {
        await CordonFleetdCommand.main(arguments)
    }
}
