import ArgumentParser
import CordonKit
import CordonProtocol
import Foundation

/// `cordon login [--provider P]`: signs in to an identity provider, or joins the sign-in an app's
/// `GetToken` started, printing the device code to enter (docs/CLI.md).
struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in to an identity provider; apps of its access groups then get tokens.",
        discussion: """
            With the device flow, prints the address to open and the code to enter there, and waits \
            until the sign-in is approved. With the authorization code flow, the agent opens the \
            browser. Joins a sign-in an app already started.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "The provider (needed when the policy declares several).")
    var provider: String?

    func run() async throws {
        let client = try await global.connect()
        let reply: IdentitySignInReply
        do {
            reply = try await client.signIn(provider: provider) { prompt in
                let address = prompt.verificationURIComplete ?? prompt.verificationURI
                // A paired CPA device has no code to enter: the user only confirms.
                try? Output.line(
                    prompt.userCode.isEmpty
                        ? "to sign in to \(prompt.provider), open \(address) and confirm"
                        : "to sign in to \(prompt.provider), open \(address) and enter the code \(prompt.userCode)")
            }
        } catch {
            await client.close()
            throw error
        }
        await client.close()
        let until = reply.expiresAt.map { " (token until \(Format.time(Date(timeIntervalSince1970: $0))))" } ?? ""
        try Output.line("signed in to \(reply.provider)\(until)")
    }
}

/// `cordon identity`: the identity broker's providers and sessions.
struct IdentityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "identity",
        abstract: "Identity providers and sessions (never a token).",
        subcommands: [IdentityStatusCommand.self])
}

/// `cordon identity status`.
struct IdentityStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "The providers, their domains, who is signed in and until when.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() async throws {
        let client = try await global.connect()
        let providers: [IdentityProviderStatus]
        do {
            providers = try await client.identityStatus()
        } catch {
            await client.close()
            throw error
        }
        await client.close()
        if json {
            try Output.line(try Output.json(providers))
            return
        }
        guard !providers.isEmpty else {
            try Output.line(
                "no identity provider (see identity.providers and identity.cpaProviders in `cordon policy show`)")
            return
        }
        var rows = [["PROVIDER", "FLOW", "DOMAIN", "SIGNED IN", "TOKEN UNTIL"]]
        for provider in providers {
            let state = provider.signingIn ? "signing in" : "no"
            if provider.sessions.isEmpty {
                rows.append([
                    provider.name, provider.flow, provider.domains.joined(separator: ","), state, "-",
                ])
            }
            for session in provider.sessions {
                rows.append([
                    provider.name, provider.flow, session.domain + (session.domainDisplayName.map { " (\($0))" } ?? ""),
                    session.user.map { "yes (\($0))" } ?? "yes",
                    Format.time(Date(timeIntervalSince1970: session.expiresAt)),
                ])
            }
        }
        for line in Format.table(rows) { try Output.line(line) }
        // The endpoints an OpenID provider's discovery document gave (URLs only).
        for provider in providers {
            guard let endpoints = provider.endpoints, let discovery = endpoints.discovery else { continue }
            try Output.line("\(provider.name): endpoints from \(discovery) and the policy:")
            let named: [(String, String?)] = [
                ("deviceAuthorization", endpoints.deviceAuthorization), ("authorization", endpoints.authorization),
                ("token", endpoints.token), ("revocation", endpoints.revocation), ("jwks", endpoints.jwks),
            ]
            for line in Format.table(named.compactMap { name, url in url.map { ["  " + name, $0] } }) {
                try Output.line(line)
            }
        }
    }
}
