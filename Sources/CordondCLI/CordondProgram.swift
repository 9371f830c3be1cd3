/// The `cordond` program, for an executable to run: the thin `cordond` (tests, `swift run`) and the
/// multi-call binary when run as `cordond` (docs/ARCHITECTURE.md, "Binaries").
public enum CordondProgram {
    /// Parses `arguments` (nil: the process's own, without its name) and runs the agent.
    public static func main(_ arguments: [String]? = nil) async {
        await Cordond.main(arguments)
    }
}
