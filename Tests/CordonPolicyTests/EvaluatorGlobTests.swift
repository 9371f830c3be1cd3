import PropertyBased
import Testing

@testable import CordonPolicy

@Suite("Evaluator: save-location globs")
struct EvaluatorGlobTests {
    @Test(arguments: [
        ("/a/*.txt", "/a/b.txt", true), ("/a/*.txt", "/a/.txt", true), ("/a/*.txt", "/a/b/c.txt", false),
        ("/a/*", "/a/", true), ("/a/*", "/a", false), ("/a/?.txt", "/a/é.txt", true), ("/a/?.txt", "/a//.txt", false),
        ("/a/**", "/a/b/c/d", true), ("/a/**", "/a", false), ("/a/**/z", "/a/z", true), ("/a/**/z", "/a/b/c/z", true),
        ("/a/**/z", "/a/bz", false), ("/a/**/*.md", "/a/x/y/r.md", true), ("/a/**/*.md", "/a/r.md", true),
        ("**", "/anything/at/all", true), ("**/b", "b", true), ("**/b", "/x/b", true), ("/a/***/b", "/a/x/y/b", true),
        ("/a/b", "/a/b", true), ("/a/b", "/A/b", false), ("/a/\\*", "/a/*", true), ("/a/\\*", "/a/x", false),
        ("~/Documents/**", "~/Documents/a", true), ("", "", true), ("", "/", false), ("/a/*b*c", "/a/xbyc", true),
    ])
    func globsMatchAsDocumented(pattern: String, path: String, matches: Bool) {
        #expect(PathGlob(pattern).matches(path) == matches, "\(pattern) vs \(path)")
    }

    @Test func adjacentWildcardsFold() {
        #expect(PathGlob("/a/**/**/b").tokens == PathGlob("/a/**/b").tokens)
        #expect(PathGlob("/a/***").tokens == PathGlob("/a/**").tokens)
        #expect(PathGlob("/a/**x").tokens.count == PathGlob("/a/*x").tokens.count)
    }

    @Test func longPatternsUseTheGeneralAutomaton() {
        let segments = (0..<40).map { "s\($0)" }
        let pattern = "/" + segments.map { "\($0)*" }.joined(separator: "/") + "/**"
        #expect(PathGlob(pattern).tokens.count > 64)
        let path = "/" + segments.map { "\($0)xyz" }.joined(separator: "/") + "/tail/end"
        #expect(PathGlob(pattern).matches(path))
        #expect(!PathGlob(pattern).matches(path.replacingOccurrences(of: "s39xyz", with: "t39")))
    }

    @Test func pathologicalPatternsStayLinear() {
        let pattern = String(repeating: "**/a*", count: 12) + "b"
        let path = String(repeating: "/aaaa", count: 800)
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            #expect(!PathGlob(pattern).matches(path))
        }
        #expect(elapsed < .seconds(2))
    }

    static let patternCharacters: [Character] = ["a", "b", "/", "*", "?", "\\"]
    static let pathCharacters: [Character] = ["a", "b", "/", "é"]
    static let patterns = Gen<Character?>.element(of: patternCharacters).compactMap { $0 }.string(of: 0...9)
    static let paths = Gen<Character?>.element(of: pathCharacters).compactMap { $0 }.string(of: 0...8)

    @Test func bothAutomataAgreeWithABacktrackingReference() async {
        await propertyCheck(count: 3000, input: Self.patterns, Self.paths) { pattern, path in
            let glob = PathGlob(pattern)
            let expected = Self.reference(Array(pattern), Array(path))
            #expect(glob.matches(path) == expected, "\(pattern) vs \(path)")
            #expect(glob.matchesWithoutMasks(path) == expected, "\(pattern) vs \(path)")
        }
    }

    /// The documented semantics, by backtracking.
    static func reference(_ pattern: [Character], _ path: [Character]) -> Bool {
        guard let first = pattern.first else { return path.isEmpty }
        switch first {
        case "*":
            let run = pattern.prefix { $0 == "*" }.count
            if run == 1 {
                let rest = Array(pattern.dropFirst())
                let limit = path.firstIndex(of: "/") ?? path.count
                return (0...limit).contains { reference(rest, Array(path.dropFirst($0))) }
            }
            var rest = Array(pattern.dropFirst(run))
            if rest.first == "/" {
                rest.removeFirst()
                let ends = [0] + path.indices.filter { path[$0] == "/" }.map { $0 + 1 }
                return ends.contains { reference(rest, Array(path.dropFirst($0))) }
            }
            return (0...path.count).contains { reference(rest, Array(path.dropFirst($0))) }
        case "?":
            guard let next = path.first, next != "/" else { return false }
            return reference(Array(pattern.dropFirst()), Array(path.dropFirst()))
        case "\\":
            let literal = pattern.dropFirst().first ?? "\\"
            guard path.first == literal else { return false }
            return reference(Array(pattern.dropFirst(2)), Array(path.dropFirst()))
        default:
            guard path.first == first else { return false }
            return reference(Array(pattern.dropFirst()), Array(path.dropFirst()))
        }
    }
}
