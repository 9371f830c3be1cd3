@testable import CordonPolicy
import Testing

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
}
