import ArgumentParser
import CordonKit
import CordonProtocol
import Foundation

/// `cordon storage export-identity --app ID`: the app's age identity, as `age-keygen` prints one,
/// so that `age -d -i FILE` decrypts what the app wrote with `SecureFile`.
struct StorageExportIdentityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export-identity",
        abstract: "Print an app's age identity (for `age -d -i`); needs the passcode, audited.",
        discussion: """
            The identity is derived from the app's current key: it opens the app's SecureFile files \
            until the app is wiped (cordon wipe --app), after which it opens nothing new. Keep it as \
            you would the passcode.
            """)

    @OptionGroup var options: StorageAppOptions

    func run() async throws {
        let exported = try await options.run { client, passcode in
            try await client.exportIdentity(appId: options.app, passcode: passcode)
        }
        try Output.line("# app: \(options.app)")
        try Output.line("# public key: \(exported.recipient)")
        try Output.line(exported.identity)
    }
}
