import ArgumentParser
import CordonKit
import CordonProtocol

/// `cordon logout`: revokes the key; with `--identity`, signs out of identity providers instead.
struct LogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Revoke the key: every app is told to halt, and the next unlock needs the passcode.",
        discussion: """
            Every copy of the key in cordond is zeroed, the one kept for fingerprint unlock too (a \
            lock keeps that one): a finger does not unlock again before a passcode unlock.

            With --identity, signs out of the identity providers instead (or of --provider only): \
            their tokens are revoked at the provider where it allows, deleted, and every app hears \
            DidSignOut. The key is not revoked then.
            """)

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Sign out of identity providers instead of revoking the key.")
    var identity = false

    @Option(help: "With --identity: only this provider.")
    var provider: String?

    func validate() throws {
        if provider != nil && !identity { throw ValidationError("--provider goes with --identity") }
    }

    func run() async throws {
        let client = try await global.connect()
        guard identity else {
            try await client.logout()
            await client.close()
            try Output.line("logged out; every copy of the key is zeroed, the next unlock needs the passcode")
            return
        }
        let providers: [IdentitySignedOut]
        do {
            providers = try await client.signOut(provider: provider)
        } catch {
            await client.close()
            throw error
        }
        await client.close()
        guard !providers.isEmpty else {
            try Output.line("not signed in to any identity provider")
            return
        }
        for signedOut in providers {
            let revoked =
                signedOut.revoked
                ? "revoked at the provider" : "not revoked: \(signedOut.revocationProblem ?? "no session")"
            try Output.line(
                "signed out of \(signedOut.provider): \(Format.count(signedOut.sessions, "session")) deleted, \(revoked)"
            )
        }
    }
}
