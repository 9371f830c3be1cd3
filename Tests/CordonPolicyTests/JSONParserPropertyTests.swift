import PropertyBased
import Testing

@testable import CordonPolicy

@Suite("Positioned JSON: properties")
struct JSONParserPropertyTests {
    @Test func anyBytesGiveAValueOrAnErrorWithAPosition() async {
        await propertyCheck(count: 500, input: Gen<UInt8>.value(in: 0...255).array(of: 0...200)) { bytes in
            checkNeverCrashes(bytes)
        }
    }

    @Test func anyJSONishBytesGiveAValueOrAnErrorWithAPosition() async {
        let alphabet = Array(#"{}[]:,"\ntfrue0123456789-+.eE/u~ab"#.utf8) + [0x0A, 0x0D, 0x09, 0xC3, 0xA9, 0xFF]
        let byte = Gen<Int>.value(in: 0...(alphabet.count - 1)).map { alphabet[$0] }
        await propertyCheck(count: 1000, input: byte.array(of: 0...120)) { bytes in
            checkNeverCrashes(bytes)
        }
    }

    @Test func mutatedPoliciesNeverCrashTheValidator() async {
        let original = Array(BuiltinPolicy.json.utf8)
        let edits = Gen<Int>.value(in: 0...(original.count - 1)).array(of: 1...8)
        await propertyCheck(count: 500, input: edits, Gen<UInt8>.value(in: 0...255)) { positions, byte in
            var bytes = original
            for (offset, position) in positions.enumerated() where position < bytes.count {
                switch offset % 3 {
                case 0: bytes[position] = byte
                case 1: bytes.remove(at: position)
                default: bytes.insert(byte, at: position)
                }
            }
            let lines = bytes.filter { $0 == 0x0A || $0 == 0x0D }.count + 1
            if case .failure(let failure) = PolicyParser.parse(bytes, source: BuiltinPolicy.source) {
                #expect(!failure.diagnostics.isEmpty)
                for diagnostic in failure.diagnostics {
                    #expect((diagnostic.line ?? 1) >= 1 && (diagnostic.line ?? 1) <= lines)
                    #expect((diagnostic.column ?? 1) >= 1)
                    #expect(!diagnostic.message.isEmpty)
                }
            }
        }
    }

    @Test func generatedDocumentsRoundTripWithExactPositionsAndPointers() async {
        await propertyCheck(count: 300, input: Gen<UInt64>.value(in: 0...UInt64.max)) { seed in
            var random = SplitMix64(seed: seed)
            let value = TestJSON.random(using: &random, depth: 0)
            let text = value.rendered(using: &random)
            guard case .success(let parsed) = PositionedJSONParser.parse(text) else {
                Issue.record("failed to parse \(text)")
                return
            }
            #expect(TestJSON(parsed) == value)
            let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map(Array.init)
            for node in parsed.allNodes {
                #expect(parsed.value(at: node.pointer) == node, "pointer \(node.pointer)")
                let line = lines.indices.contains(node.line - 1) ? lines[node.line - 1] : []
                let first = line.indices.contains(node.column - 1) ? line[node.column - 1] : " "
                #expect(TestJSON.canStart(node.value, with: first), "\(node.pointer) at \(node.line):\(node.column)")
            }
        }
    }

    private func checkNeverCrashes(_ bytes: [UInt8]) {
        switch PositionedJSONParser.parse(bytes) {
        case .success(let value):
            #expect(value.line == 1 || bytes.contains(0x0A) || bytes.contains(0x0D))
        case .failure(let error):
            #expect(error.line >= 1 && error.column >= 1)
            #expect(!error.message.isEmpty)
        }
        _ = PolicyParser.parse(bytes, source: PolicySource(path: "fuzz.json", origin: .user))
    }
}

extension PositionedJSON {
    /// This value and every value inside it.
    var allNodes: [PositionedJSON] {
        switch value {
        case .array(let elements): return [self] + elements.flatMap(\.allNodes)
        case .object(let members): return [self] + members.flatMap(\.value.allNodes)
        default: return [self]
        }
    }
}

/// A small deterministic random number generator for building test documents from a seed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
