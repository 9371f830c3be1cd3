import CordonProtocol
import Foundation

// Signing is the admin's (`cordon fleet command`): kept apart from the verifier, which the fuzz
// build compiles without the writer and the signing keys (scripts/fuzz.sh).
extension FleetPushedCommands {
    /// The signed file of `file`'s commands, signed by `keys` (the commands role's).
    public static func sign(_ file: FleetCommandFile, with keys: [TUFSigningKey]) throws(TUFError) -> [UInt8] {
        let signed = JSONValue.object([
            "_type": .string(type), "spec_version": .string(TUFWriter.specVersion),
            "version": .int(file.commands.map(\.counter).max() ?? 0),
            "expires": .string(TUFDate.format(file.commands.map(\.expires).max() ?? Date(timeIntervalSince1970: 0))),
            "device": .string(file.device), "commands": .array(file.commands.map(\.json)),
        ])
        return try TUFWriter.sign(signed, with: keys)
    }
}
