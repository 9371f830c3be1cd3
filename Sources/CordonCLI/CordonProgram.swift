/// The `cordon` program, for an executable to run: the thin `cordon` (tests, `swift run`) and the
/// multi-call binary installed as `cordon` (docs/ARCHITECTURE.md, "Binaries").
public enum CordonProgram {
    /// Parses `arguments` (nil: the process's own, without its name), runs the command and exits
    /// with its documented code.
    public static func main(_ arguments: [String]? = nil) async {
        await Cordon.main(arguments)
    }
}
