// The one installed executable (`make install`, the Debian package): `cordon`, with `cordond` and
// `cordon-fleetd` as symbolic links to it. It runs the program its name names (the last component
// of argv[0]: `cordond`, `cordon-fleetd`, anything else `cordon`); under a name of its own
// (`cordon-multicall`, the build product) the first argument names it instead
// (`cordon-multicall cordond --help`). `cordon`'s own arguments are never read as a program name.
// Three executables of their own would each carry the Swift runtime, Foundation and its ICU data:
// docs/PERFORMANCE.md, "Install size".
import CordonCLI
import CordonFleetdCLI
import CordondCLI

enum Program: String {
    case cordon
    case cordond
    case fleetd = "cordon-fleetd"
}

/// The program `arguments` (the process's) ask for, and the arguments it parses (nil: the process's own).
func choose(_ arguments: [String]) -> (Program, [String]?) {
    let invokedAs = String(arguments.first?.split(separator: "/").last ?? "")
    if let program = Program(rawValue: invokedAs) { return (program, nil) }
    if arguments.count > 1, let program = Program(rawValue: arguments[1]) {
        return (program, Array(arguments.dropFirst(2)))
    }
    return (.cordon, nil)
}

let (program, arguments) = choose(CommandLine.arguments)
switch program {
case .cordon: await CordonProgram.main(arguments)
case .cordond: await CordondProgram.main(arguments)
case .fleetd: await CordonFleetdProgram.main(arguments)
}
