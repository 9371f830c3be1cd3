import CordonIdentity
import CordonProtocol
import Foundation
import Testing

/// `TokenSet(readingJSON:)`, which `GetToken` reads each session's tokens with, against
/// `JSONDecoder` on the form `JSONEncoder` stores: the same tokens for every stored form, and nil
/// (the caller then decodes, naming the problem) wherever the decoder would refuse.
@Suite struct TokenSetReadingTests {
    static func read(_ bytes: Data) throws -> TokenSet? {
        TokenSet(readingJSON: try JSONNodeParser.parse(Array(bytes)))
    }

    @Test func everyStoredFormReadsAsTheDecoderReadsIt() throws {
        var generator = SplitMix64(seed: 0x70CE_5E75)
        let texts = ["", "a", "eyJhbGciOi.J9.x-_", "é \"quoted\" \\ / \n\t", "😀", String(repeating: "z", count: 900)]
        func text() -> String { texts[Int.random(in: 0..<texts.count, using: &generator)] }
        func maybe() -> String? { Bool.random(using: &generator) ? text() : nil }
        for _ in 0..<400 {
            let expiresAt =
                Bool.random(using: &generator)
                ? Double(Int.random(in: 0...4_000_000_000, using: &generator))
                : Double.random(in: 0...4e9, using: &generator)
            let tokens = TokenSet(
                accessToken: text(), tokenType: Bool.random(using: &generator) ? "Bearer" : text(),
                expiresAt: expiresAt, refreshToken: maybe(), scope: maybe(), idToken: maybe(), domain: maybe(),
                domainDisplayName: maybe(), userName: maybe())
            let stored = try JSONEncoder().encode(tokens)
            #expect(try Self.read(stored) == tokens)
            #expect(try JSONDecoder().decode(TokenSet.self, from: stored) == tokens)
        }
    }

    @Test func whatTheDecoderRefusesReadsAsNil() throws {
        let refused = [
            #"{"tokenType":"Bearer","expiresAt":1}"#,
            #"{"accessToken":"a","expiresAt":1}"#,
            #"{"accessToken":"a","tokenType":"Bearer"}"#,
            #"{"accessToken":null,"tokenType":"Bearer","expiresAt":1}"#,
            #"{"accessToken":1,"tokenType":"Bearer","expiresAt":1}"#,
            #"{"accessToken":"a","tokenType":"Bearer","expiresAt":"1"}"#,
            #"{"accessToken":"a","tokenType":"Bearer","expiresAt":1,"refreshToken":7}"#,
            #"["accessToken"]"#,
        ]
        for text in refused {
            let bytes = Data(text.utf8)
            #expect(try Self.read(bytes) == nil, "\(text)")
            #expect(throws: DecodingError.self, "\(text)") { try JSONDecoder().decode(TokenSet.self, from: bytes) }
        }
        // Read alike: null for an optional member, and a member neither knows.
        let read = Data(#"{"accessToken":"a","tokenType":"Bearer","expiresAt":1.5,"scope":null,"later":[1]}"#.utf8)
        let tokens = TokenSet(
            accessToken: "a", tokenType: "Bearer", expiresAt: 1.5, refreshToken: nil, scope: nil, idToken: nil)
        #expect(try Self.read(read) == tokens)
        #expect(try JSONDecoder().decode(TokenSet.self, from: read) == tokens)
    }
}
