import CordonProtocol
import Foundation

@testable import CordonPolicy

#if !CORDON_FUZZER
    import Testing
#endif

// The invariants the `policy` libFuzzer target in `Fuzz/` asserts. This file is compiled twice:
// into the test target (the suite at the end replays the committed corpus and the regressions
// through these checks) and, with `-D CORDON_FUZZER`, into the fuzzer by `scripts/fuzz.sh`. Each
// check returns nil when every invariant holds and a description of the first broken one.

/// A policy file: the positioned JSON parser, then the policy parser for every origin, then, for
/// a valid document, merging, compiling, deciding and explaining.
enum PolicyFuzzCheck {
    static func check(_ input: [UInt8]) -> String? {
        let json = PositionedJSONParser.parse(input)
        if let problem = PositionedJSONFuzzCheck.check(json) { return problem }
        if case .success(let root) = json, let problem = PathGlobFuzzCheck.check(strings(in: root)) { return problem }
        var valid: [(PolicyDocument, PolicySource)] = []
        for origin in PolicySource.Origin.allCases {
            let source = PolicySource(path: "fuzz-\(origin.rawValue).json", origin: origin)
            let result = PolicyParser.parse(input, source: source)
            if let problem = diagnosticsProblem(result, json: json, source: source) { return "\(origin): \(problem)" }
            guard case .success(let document) = result, origin != .builtin else { continue }
            if let problem = PolicyEvaluationFuzzCheck.check(document, source) { return "\(origin): \(problem)" }
            valid.append((document, source))
        }
        return valid.count == 2 ? PolicyEvaluationFuzzCheck.mergeLaws(valid[0], valid[1]) : nil
    }

    /// The document's strings, at most `limit`: `saveLocations` globs first, then the other
    /// values and keys in document order.
    static func strings(in json: PositionedJSON, limit: Int = 8) -> [String] {
        var globs: [String] = []
        var others: [String] = []
        var pending = [json]
        while let next = pending.popLast() {
            switch next.value {
            case .string(let text):
                if next.pointer.contains("/saveLocations/") { globs.append(text) } else { others.append(text) }
            case .array(let elements): pending += elements.reversed()
            case .object(let members):
                others += members.map(\.key)
                pending += members.map(\.value).reversed()
            case .null, .bool, .number: break
            }
        }
        return Array((globs + others).prefix(limit))
    }

    /// A parse succeeds, or fails with diagnostics that each name the file, a position and a JSON
    /// pointer: the syntax error alone, or values of the parsed document, in document order.
    static func diagnosticsProblem(
        _ result: Result<PolicyDocument, PolicyParseFailure>, json: Result<PositionedJSON, PositionedJSONError>,
        source: PolicySource
    ) -> String? {
        if case .success(let root) = json, PolicyParser.validate(root, source: source) != result {
            return "parse and validate of the parsed JSON disagree"
        }
        guard case .failure(let failure) = result else {
            if case .failure(let error) = json { return "a document with a syntax error parsed: \(error)" }
            return nil
        }
        let diagnostics = failure.diagnostics
        guard !diagnostics.isEmpty else { return "a failure without diagnostics" }
        var previous = (0, 0)
        for diagnostic in diagnostics {
            guard diagnostic.path == source.path, !diagnostic.message.isEmpty,
                diagnostic.pointer.isEmpty || diagnostic.pointer.unicodeScalars.first == "/",
                let line = diagnostic.line, let column = diagnostic.column, line >= 1, column >= 1
            else { return "malformed diagnostic \(diagnostic)" }
            guard previous <= (line, column) else { return "diagnostics out of document order: \(failure)" }
            previous = (line, column)
            if case .success(let root) = json {
                // The pointer names a value; the position is the value's or its key's (before it).
                guard let value = root.value(at: diagnostic.pointer), (line, column) <= (value.line, value.column)
                else { return "diagnostic \(diagnostic) does not point at a value of the document" }
            }
        }
        if case .failure(let error) = json {
            let expected = PolicyDiagnostic(
                path: source.path, pointer: error.pointer, line: error.line, column: error.column,
                message: error.message)
            if diagnostics != [expected] { return "syntax error \(error) reported as \(failure)" }
        }
        return nil
    }
}

/// The positioned JSON parser: errors have a position and a pointer; every parsed value is where
/// its pointer says, after its container; printing and parsing again changes nothing.
enum PositionedJSONFuzzCheck {
    static func check(_ result: Result<PositionedJSON, PositionedJSONError>) -> String? {
        switch result {
        case .failure(let error):
            guard error.line >= 1, error.column >= 1, !error.message.isEmpty,
                error.pointer.isEmpty || error.pointer.unicodeScalars.first == "/"
            else { return "malformed JSON error \(error.kind): \(error)" }
            return nil
        case .success(let root):
            if let problem = positionsProblem(root, in: root, after: (0, 0)) { return problem }
            let text = printed(root)
            guard case .success(let again) = PositionedJSONParser.parse(text) else {
                return "the printed document does not parse: \(text)"
            }
            return printed(again) == text ? nil : "printing the reparsed document differs from \(text)"
        }
    }

    private static func positionsProblem(_ json: PositionedJSON, in root: PositionedJSON, after: (Int, Int))
        -> String?
    {
        guard json.line >= 1, json.column >= 1, (json.line, json.column) > after else {
            return "\(json.pointer) at \(json.line):\(json.column) is not after its container"
        }
        guard root.value(at: json.pointer) == json else { return "the pointer \(json.pointer) names another value" }
        switch json.value {
        case .array(let elements):
            for element in elements {
                if let problem = positionsProblem(element, in: root, after: (json.line, json.column)) { return problem }
            }
        case .object(let members):
            for member in members {
                guard (member.keyLine, member.keyColumn) > (json.line, json.column) else {
                    return "the key \(member.key) is not after its object"
                }
                let problem = positionsProblem(member.value, in: root, after: (member.keyLine, member.keyColumn))
                if let problem { return problem }
            }
        case .number(let number):
            if let integer = number.integerValue, !number.isInteger || Double(integer) != number.doubleValue {
                return "the number \(number.text) has the integer value \(integer)"
            }
        case .null, .bool, .string:
            break
        }
        return nil
    }

    /// Compact JSON text for a value: members in document order, strings minimally escaped.
    static func printed(_ json: PositionedJSON) -> String {
        switch json.value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let number): return number.text
        case .string(let text): return quoted(text)
        case .array(let elements): return "[" + elements.map(printed).joined(separator: ",") + "]"
        case .object(let members):
            return "{" + members.map { quoted($0.key) + ":" + printed($0.value) }.joined(separator: ",") + "}"
        }
    }

    private static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

/// `saveLocations` globs: the bit-mask automaton (patterns under 64 tokens) and the general one
/// agree on every path, and a pattern without wildcards or escapes matches exactly itself.
enum PathGlobFuzzCheck {
    static func check(_ strings: [String]) -> String? {
        for pattern in strings {
            let glob = PathGlob(pattern)
            // Candidate paths: every string, and the pattern with its wildcards matching nothing.
            let bare = pattern.replacingOccurrences(of: "**/", with: "").filter { $0 != "*" && $0 != "?" }
            for path in strings + [pattern, pattern + "/x", bare, bare + "a/b", ""]
            where glob.matches(path) != glob.matchesWithoutMasks(path) {
                let (quotedPattern, quotedPath) = (PositionedJSON.quoted(pattern), PositionedJSON.quoted(path))
                return "the glob \(quotedPattern) matches \(quotedPath) in one automaton only"
            }
            if !pattern.contains(where: { "*?\\".contains($0) }), !glob.matches(pattern) {
                return "the literal glob \(PositionedJSON.quoted(pattern)) does not match itself"
            }
        }
        return nil
    }
}

/// A valid document: merging is idempotent and commutative, adding it to the built-in default
/// only ever tightens decisions, and explanations agree with decisions.
enum PolicyEvaluationFuzzCheck {
    static let builtin = EffectivePolicy(document: BuiltinPolicy.document, source: BuiltinPolicy.source)
    static let builtinEvaluator = PolicyEvaluator(builtin)

    static func check(_ document: PolicyDocument, _ source: PolicySource) -> String? {
        let own = EffectivePolicy(document: document, source: source)
        guard own.merged(with: own) == own else { return "merging a document with itself changes it" }
        let merged = builtin.merged(with: own)
        guard merged == own.merged(with: builtin) else { return "merging with the default is not commutative" }
        guard EffectivePolicy.merge([(BuiltinPolicy.document, BuiltinPolicy.source), (document, source)]) == merged
        else { return "merge(_:) differs from merged(with:)" }
        let hash = merged.versionHash
        guard hash.count == 16, hash.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else {
            return "version hash \(hash) is not 16 lower-case hex digits"
        }
        let moved = EffectivePolicy(document: document, source: PolicySource(path: "moved", origin: source.origin))
        guard builtin.merged(with: moved).versionHash == hash else { return "renaming the file changes the hash" }
        guard merged.describeEffective().allSatisfy({ $0.path.hasPrefix("/") }) else {
            return "an effective setting's path is not a pointer"
        }
        let evaluator = PolicyEvaluator(merged)
        for request in requests(document) {
            if let problem = decisionProblem(request, evaluator) { return problem }
        }
        for facts in registrations(document) {
            let registration = evaluator.register(facts)
            guard evaluator.explain(facts).registration == registration else {
                return "the explanation of registering \(facts) differs from the registration"
            }
            guard !registration.wipe || registration.outcome == .refused else { return "a wipe without refusal" }
        }
        return nil
    }

    /// The same text as an admin and as a user file: merging them with the default is commutative
    /// and associative.
    static func mergeLaws(_ first: (PolicyDocument, PolicySource), _ second: (PolicyDocument, PolicySource))
        -> String?
    {
        let one = EffectivePolicy(document: first.0, source: first.1)
        let two = EffectivePolicy(document: second.0, source: second.1)
        guard one.merged(with: two) == two.merged(with: one) else { return "merging admin and user is not commutative" }
        guard builtin.merged(with: one).merged(with: two) == builtin.merged(with: one.merged(with: two)) else {
            return "merging the default, admin and user is not associative"
        }
        return nil
    }

    /// The decision names its action and a reason, its explanation agrees, and the default alone
    /// allows at least as much (with at most as tight a truncation).
    static func decisionProblem(_ request: DecisionRequest, _ evaluator: PolicyEvaluator) -> String? {
        let decision = evaluator.decide(request)
        guard decision.action == request.action, !decision.reason.isEmpty else {
            return "decision \(decision) for \(request) has another action or no reason"
        }
        let explanation = evaluator.explain(request)
        guard explanation.decision == decision else { return "explain(\(request)) decides differently" }
        let explained = Set(explanation.steps.flatMap { $0.rules + $0.candidates.map(\.rule) })
        if request.action != .appRegister, let rule = decision.rules.first(where: { !explained.contains($0) }) {
            return "\(request) is decided by \(rule), which its explanation does not show"
        }
        guard decision.allowed else { return nil }
        if let problem = looser(decision, than: builtinEvaluator.decide(request), "the default alone", request) {
            return problem
        }
        // Overrides only tighten: the same request from an app no override names is no stricter.
        var unnamed = request
        unnamed.app.id = "fuzz.unnamed.app"
        guard request.action != .appRegister, request.peer?.id != request.app.id,
            evaluator.policy.overrides[request.app.id] != nil, evaluator.policy.overrides[unnamed.app.id] == nil
        else { return nil }
        return looser(decision, than: evaluator.decide(unnamed), "an app no override names", request)
    }

    /// Whether the allowed `decision` is looser than `reference`: allowed where it denies, or
    /// truncating less.
    static func looser(
        _ decision: PolicyDecision, than reference: PolicyDecision, _ what: String, _ request: DecisionRequest
    )
        -> String?
    {
        guard reference.allowed else { return "\(request) is allowed, but denied for \(what)" }
        if let limit = reference.truncationLimit, (decision.truncationLimit ?? Int.max) > limit {
            return "\(request) is truncated less than for \(what)"
        }
        return nil
    }

    /// App ids the document names (and one it does not), at most four.
    static func appIds(_ document: PolicyDocument) -> [String] {
        let named = document.overrides.flatMap(\.apps) + (document[PolicyKeys.Apps.managed] ?? []).map(\.id)
        var ids = ["com.example.fuzz"]
        for id in named where !ids.contains(id) && ids.count < 4 { ids.append(id) }
        return ids
    }

    /// A few requests of every action for every app id, varying the peer, location, type, length.
    static func requests(_ document: PolicyDocument) -> [DecisionRequest] {
        let ids = appIds(document)
        typealias Documents = PolicyKeys.Documents
        let sections = [document.settings] + document.overrides.map(\.settings)
        let locations =
            ["/home/user/Documents/report.pdf", "/tmp/payload.exe"]
            + sections.compactMap { $0[Documents.saveLocations]?.first }.prefix(2)
        let types: [String?] =
            [nil, "text/plain"] + sections.compactMap { $0[Documents.blockedTypes]?.first }.prefix(2)
        let lengths: [Int?] = [nil, 10, 20_000_000]
        var requests: [DecisionRequest] = []
        let listed = sections.flatMap { [$0[Documents.allowedTargets]?.first, $0[Documents.allowedSources]?.first] }
            .compactMap { $0 }
        let others = Array(ids.dropFirst().prefix(2) + listed.prefix(4)) + ["com.example.peer"]
        for (index, id) in ids.enumerated() {
            for action in PolicyAction.allCases {
                for variant in 0..<6 {
                    let other = others[(index + variant) % others.count]
                    let peers: [AppFacts?] = [
                        nil, AppFacts(id: other, managed: true), AppFacts(id: other, managed: false),
                    ]
                    requests.append(
                        DecisionRequest(
                            action: action, app: AppFacts(id: id, managed: variant % 2 == 0),
                            peer: variant == 5 ? AppFacts(id: id, managed: true) : peers[variant % 3],
                            location: locations[variant % locations.count], contentType: types[variant % types.count],
                            length: lengths[variant % 3]))
                }
            }
        }
        return requests
    }

    /// Registrations of every app id: bound and other executables, with and without conditions.
    static func registrations(_ document: PolicyDocument) -> [RegistrationFacts] {
        let bindings = document[PolicyKeys.Apps.managed] ?? []
        return appIds(document).flatMap { id -> [RegistrationFacts] in
            let binding = bindings.first { $0.id == id }
            let executables = (binding?.executables.prefix(1) ?? []) + ["/usr/bin/fuzz"]
            return executables.flatMap { executable in
                (0..<4).map { variant in
                    RegistrationFacts(
                        appId: id, executable: executable, sha256: variant == 0 ? nil : binding?.sha256.first,
                        debuggerAttached: variant == 2, preloadInjected: variant == 3)
                }
            }
        }
    }
}

#if !CORDON_FUZZER
    @Suite("Fuzz corpus and regressions: policy")
    struct PolicyFuzzRegressionTests {
        /// `Fuzz/corpus/policy/` and `Fuzz/regressions/policy/` files, by path.
        static let inputs: [String] = {
            let root = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
                .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Fuzz")
            return ["corpus", "regressions"].flatMap { kind -> [String] in
                let directory = root.appendingPathComponent(kind).appendingPathComponent("policy")
                let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
                return names.filter { !$0.hasPrefix(".") }.sorted().map { directory.appendingPathComponent($0).path }
            }
        }()

        @Test func theCorpusHoldsTheShippedPoliciesAndTheInvalidFixtures() {
            let names = Set(Self.inputs.map { URL(fileURLWithPath: $0).lastPathComponent })
            #expect(names.contains("policies-default.json"))
            #expect(names.contains("fixture-many-problems.json"))
            #expect(Self.inputs.count >= 25)
        }

        @Test(arguments: inputs)
        func inputKeepsTheInvariants(_ path: String) throws {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(PolicyFuzzCheck.check(bytes) == nil)
        }
    }
#endif
