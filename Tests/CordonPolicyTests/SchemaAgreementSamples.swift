@testable import CordonPolicy

/// Small documents at the edges of every rule, valid and invalid, that both validators judge.
enum SchemaAgreementSamples {
    static func document(_ members: String) -> String { #"{"schema": "cordon.policy.v1", "# + members + "}" }

    /// A document setting `name` (`section.key`) to `value`.
    static func member(_ name: String, _ value: String) -> String {
        let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
        return document(#""\#(parts[0])": {"\#(parts.last ?? "?")": \#(value)}"#)
    }

    static let strings = [
        "com.example.notes", "a.b", "notes", "", ".a.b", "a..b", "a.b.", "a b.c", "/usr/bin/x", "bin/x",
        "application/pdf",
        "image/*", ".exe", "exe", "*/*", "a/b/c", ".", "..x", "text/plain+xml", String(repeating: "ab", count: 32),
        String(repeating: "AB", count: 32), String(repeating: "a", count: 63), "/home/*/Documents/**",
    ]

    static let documents: [String] = {
        var result = [
            "{}", #"{"schema": "cordon.policy.v1"}"#, #"{"schema": "cordon.policy.v2"}"#, #"{"schema": null}"#, "[]",
            "1", "null",
            document(#""unknownSection": {}"#), document(#""overrides": []"#), document(#""overrides": [{}]"#),
            document(#""overrides": [{"apps": []}]"#), document(#""overrides": [{"apps": ["a.b"]}]"#),
            document(#""overrides": [{"apps": ["a.b"], "passcode": {}}]"#),
            document(#""overrides": [{"apps": ["a.b"], "apps2": 1}]"#),
            document(#""apps": {"managed": []}"#), document(#""apps": {"managed": [{"id": "a.b"}]}"#),
            document(#""apps": {"managed": [{"id": "a.b", "executables": []}]}"#),
            document(#""apps": {"managed": [{"id": "a.b", "executables": ["/x"], "extra": 1}]}"#),
            document(#""apps": {"managed": [{"id": "a.b", "executables": ["/x"], "sha256": []}]}"#),
            document(#""lock": []"#), document(#""lock": null"#), document(#""documents": {"blockedTypes": []}"#),
            // OpenID discovery: with an issuer the endpoints are optional; without, the token one is required.
            document(
                #""identity": {"providers": [{"name": "a", "issuer": "https://i.example", "clientId": "c", "flow": "device"}]}"#
            ),
            document(
                #""identity": {"providers": [{"name": "a", "issuer": "https://i.example", "endpoints": {}, "clientId": "c", "flow": "device"}]}"#
            ),
            document(#""identity": {"providers": [{"name": "a", "clientId": "c", "flow": "device"}]}"#),
            document(
                #""identity": {"providers": [{"name": "a", "endpoints": {"authorization": "https://i.example/a"}, "clientId": "c", "flow": "authorizationCode"}]}"#
            ),
            document(
                #""identity": {"providers": [{"name": "a", "endpoints": {"authorization": "https://i.example/a", "token": "https://i.example/t"}, "clientId": "c", "flow": "authorizationCode"}]}"#
            ),
        ]
        for (key, range) in PolicyParser.Rules.ranges {
            for value in [range.lowerBound - 1, range.lowerBound, range.upperBound, range.upperBound + 1] {
                result.append(member(key, String(value)))
            }
            for value in [
                "\(range.lowerBound).0", "\(range.lowerBound).5", "\"\(range.lowerBound)\"", "true", "null", "1e1",
            ] {
                result.append(member(key, value))
            }
        }
        for (key, spellings) in PolicyParser.Rules.spellings {
            for spelling in spellings + ["bogus", spellings[0].uppercased()] {
                result.append(member(key, "\"\(spelling)\""))
            }
            result.append(member(key, "1"))
        }
        for key in [
            "passcode.allowSimple", "lock.onScreenLock", "lock.onSuspend", "lock.onSessionIdle",
            "lock.discardKeyOnLock",
            "pasteboard.clearOnLock",
        ] {
            for value in ["true", "false", "0", "\"true\"", "null"] { result.append(member(key, value)) }
        }
        for text in strings {
            let quoted = PositionedJSON.quoted(text, limit: 200)
            result.append(document(#""documents": {"allowedTargets": [\#(quoted)]}"#))
            result.append(document(#""documents": {"saveLocations": [\#(quoted)]}"#))
            result.append(document(#""documents": {"blockedTypes": [\#(quoted)]}"#))
            result.append(document(#""apps": {"managed": [{"id": \#(quoted), "executables": ["/x"]}]}"#))
            result.append(document(#""apps": {"managed": [{"id": "a.b", "executables": [\#(quoted)]}]}"#))
            result.append(
                document(#""apps": {"managed": [{"id": "a.b", "executables": ["/x"], "sha256": [\#(quoted)]}]}"#))
        }
        return result
    }()
}
