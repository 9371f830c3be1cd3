import CordonProtocol
import Foundation
import Testing

/// `HostPattern`: the rules of its doc comment, and the host-name cases of C2SP x509-limbo
/// (`fixtures/x509-limbo/`, see its README).
@Suite("Host patterns")
struct HostPatternTests {
    typealias Problem = HostPattern.Problem

    @Test(
        "refused patterns name their problem",
        arguments: [
            ("", Problem.empty), ("*", .bareWildcard), ("**", .bareWildcard), ("**.example.com", .bareWildcard),
            ("a*.example.com", .wildcardNotWholeLeftmostLabel), ("a.*.example.com", .wildcardNotWholeLeftmostLabel),
            ("*.*.example.com", .wildcardNotWholeLeftmostLabel), ("*.com", .wildcardOverTooFewLabels),
            ("*.10.0.0.1", .wildcardOverAddress), ("API.example.com", .invalidCharacter),
            ("api.example.com.", .emptyLabel), ("api..example.com", .emptyLabel), (".example.com", .emptyLabel),
            ("foo_bar.example.com", .invalidCharacter), ("bücher.example", .invalidCharacter),
            (String(repeating: "a", count: 64) + ".example.com", .tooLong),
            (Array(repeating: String(repeating: "a", count: 63), count: 4).joined(separator: ".") + ".com", .tooLong),
        ])
    func refused(text: String, problem: Problem) {
        #expect(throws: problem) { try HostPattern(validating: text) }
        #expect(HostPattern(text) == nil)
    }

    @Test("exact hosts, addresses and one-label wildcards match as documented")
    func matching() throws {
        let exact = try HostPattern(validating: "api.example.com")
        #expect(!exact.isWildcard)
        #expect(exact.matches("api.example.com"))
        #expect(exact.matches("API.Example.COM."), "the host is lower-cased and one trailing dot dropped")
        #expect(!exact.matches("api.example.com.."))
        #expect(!exact.matches("x.api.example.com"))
        #expect(!exact.matches("example.com"))

        let wildcard = try HostPattern(validating: "*.example.com")
        #expect(wildcard.isWildcard)
        #expect(wildcard.matches("a.example.com"))
        #expect(wildcard.matches("xn--bcher-kva.example.com"))
        #expect(!wildcard.matches("example.com"), "never the bare suffix")
        #expect(!wildcard.matches("a.b.example.com"), "exactly one label")
        #expect(!wildcard.matches(".example.com"))
        #expect(!wildcard.matches("*.example.com"), "a host's own '*' is not a label")
        #expect(!wildcard.matches("a.example.org"))

        let v4 = try HostPattern(validating: "192.0.2.10")
        #expect(v4.matches("192.0.2.10"))
        #expect(!v4.matches("192.0.2.100"))
        #expect(HostPattern("192.0.2.010")?.isWildcard == false, "a leading zero is a name, not an address")
        let v6 = try HostPattern(validating: "2001:DB8::1")
        #expect(v6.matches("[2001:db8::1]"), "an IPv6 host in brackets, compared lower-cased")
        #expect(v6.matches("2001:db8::1"))
    }

    @Test("an exact host is more specific than any wildcard; a longer suffix beats a shorter one")
    func specificity() throws {
        let exact = try HostPattern(validating: "a.example.com")
        let near = try HostPattern(validating: "*.example.com")
        let far = try HostPattern(validating: "*.com.example")
        let longer = try HostPattern(validating: "*.eu.example.com")
        #expect(exact.specificity > longer.specificity)
        #expect(longer.specificity > near.specificity)
        let long = try HostPattern(validating: "*." + String(repeating: "a", count: 60) + ".com")
        #expect(exact.specificity > long.specificity)
        #expect(far.specificity == near.specificity)
    }

    // MARK: C2SP x509-limbo

    struct LimboCase: Decodable, Sendable, CustomTestStringConvertible {
        struct Peer: Decodable, Sendable {
            var kind: String
            var value: String
        }
        var id: String
        var san: [String]
        var sanKind: String
        var peer: Peer
        var expected: String
        var invalidWildcard: Bool?

        var testDescription: String { id }
    }

    struct LimboFile: Decodable {
        var source: String
        var cases: [LimboCase]
    }

    static let limboCases: [LimboCase] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "fixtures/x509-limbo/hostname-cases.json")
        guard let data = try? Data(contentsOf: url) else { return [] }
        return (try? JSONDecoder().decode(LimboFile.self, from: data).cases) ?? []
    }()

    /// Where HostPattern deliberately differs from a certificate validator, and why. A policy
    /// pattern selects the hosts a pin governs; it never grants trust, so a pattern that covers
    /// more hosts pins more of them, never fewer.
    static let deliberateDifferences: [String: String] = [
        "webpki::san::public-suffix-multi-label-wildcard-san":
            "HostPattern has no Public Suffix List: \"*.co.uk\" is accepted and pins every host one label below it",
        "webpki::san::public-suffix-private-namespace-wildcard-san":
            "HostPattern has no Public Suffix List: \"*.s3.amazonaws.com\" is accepted and pins every bucket host",
        "rfc5280::san::ip-in-dns":
            "a policy has no separate dNSName and iPAddress kinds: \"8.8.8.8\" is the IP address host, as a client names it",
    ]

    @Test func theLimboSubsetIsThere() {
        #expect(Self.limboCases.count == 19)
        #expect(Set(Self.deliberateDifferences.keys).isSubset(of: Set(Self.limboCases.map(\.id))))
    }

    /// A SAN that HostPattern accepts matches exactly when limbo says the name matches; a SAN
    /// limbo refuses as a name is refused by `HostPattern(validating:)` or does not match.
    @Test(arguments: limboCases)
    func limboHostNameCase(_ limbo: LimboCase) {
        let succeeds = limbo.expected == "SUCCESS"
        let patterns = limbo.san.map { HostPattern($0) }
        let matched = patterns.contains { $0?.matches(limbo.peer.value) == true }
        if let why = Self.deliberateDifferences[limbo.id] {
            // Documented: HostPattern accepts the pattern and matches the host limbo refuses.
            #expect(patterns.allSatisfy { $0 != nil } && matched && !succeeds, "\(limbo.id): \(why)")
            return
        }
        if limbo.invalidWildcard == true {
            #expect(!matched, "\(limbo.id): limbo refuses \(limbo.san) as a name")
            #expect(patterns.allSatisfy { $0 == nil }, "\(limbo.id): HostPattern refuses \(limbo.san)")
            return
        }
        #expect(patterns.allSatisfy { $0 != nil }, "\(limbo.id): \(limbo.san) is a valid pattern")
        #expect(matched == succeeds, "\(limbo.id): \(limbo.san) against \(limbo.peer.value)")
    }
}
