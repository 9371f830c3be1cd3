import CordonProtocol
import Foundation

#if !CORDON_FUZZER
    import Testing
#endif

// The invariants the libFuzzer targets in `Fuzz/` assert. This file is compiled twice: into the
// test target (the suite at the end replays the committed corpora and the regressions through
// these checks) and, with `-D CORDON_FUZZER`, into the fuzzers by `scripts/fuzz.sh`. Each check
// returns nil when every invariant holds and a description of the first broken one otherwise.

/// Frame splitting: the input's first byte is the size limit, its second seeds the sizes of the
/// reads the rest of it arrives in.
enum VarlinkFrameFuzzCheck {
    /// What a stream splits into: its messages, then either the limit was hit or a partial tail.
    struct Outcome: Equatable {
        var messages: [[UInt8]] = []
        var tooLarge = false
        /// Bytes consumed as messages and their NULs.
        var consumed = 0
    }

    static func check(_ input: [UInt8]) -> String? {
        guard input.count >= 2 else { return nil }
        let limit = Int(input[0])
        let stream = Array(input.dropFirst(2))
        var failure: String?
        let outcome = incremental(stream, limit: limit, seed: input[1]) { failure = failure ?? $0 }
        if let failure { return failure }
        let expected = reference(stream, limit: limit)
        if outcome != expected { return "incremental split \(outcome) differs from one-shot split \(expected)" }
        let framed: [UInt8] = outcome.messages.flatMap { $0 + [UInt8(0)] }
        if framed != Array(stream.prefix(outcome.consumed)) { return "messages + NULs differ from consumed input" }
        if outcome.messages.contains(where: { $0.count > limit || $0.contains(0) }) {
            return "a message is over the limit or holds a NUL"
        }
        return nil
    }

    /// Feeds `stream` in reads of 1 to 16 bytes, scanning after each as the NIO decoder does;
    /// the scans see an `ArraySlice` whose start index is the reader index, like a `ByteBufferView`.
    static func incremental(_ stream: [UInt8], limit: Int, seed: UInt8, fail: (String) -> Void) -> Outcome {
        var splitter = VarlinkFrameSplitter(maxMessageBytes: limit)
        var outcome = Outcome()
        var state = UInt32(seed) &* 2_654_435_761 | 1
        var fed = 0
        while fed < stream.count, !outcome.tooLarge {
            state = state &* 1_103_515_245 &+ 12_345
            fed = min(stream.count, fed + Int(state >> 16) % 16 + 1)
            drain(&splitter, stream[outcome.consumed..<fed], into: &outcome, fail: fail)
        }
        // End of input (`decodeLast`): scanning the same bytes again must give the same answer.
        if !outcome.tooLarge, splitter.scan(stream[outcome.consumed..<fed]) != .needMoreData {
            fail("a second scan of unchanged bytes did not ask for more data")
        }
        return outcome
    }

    private static func drain(
        _ splitter: inout VarlinkFrameSplitter, _ buffered: ArraySlice<UInt8>, into outcome: inout Outcome,
        fail: (String) -> Void
    ) {
        var unread = buffered
        while true {
            switch splitter.scan(unread) {
            case .needMoreData:
                if unread.contains(0) || unread.count > limitOf(splitter) {
                    fail("needMoreData with a NUL or more than the limit buffered")
                }
                return
            case .tooLarge:
                outcome.tooLarge = true
                return
            case .message(let length):
                guard length >= 0, length < unread.count, unread[unread.startIndex + length] == 0 else {
                    fail("message length \(length) does not end at a NUL of \(unread.count) buffered bytes")
                    return
                }
                outcome.messages.append(Array(unread.prefix(length)))
                outcome.consumed += length + 1
                unread = unread.dropFirst(length + 1)
            }
        }
    }

    private static func limitOf(_ splitter: VarlinkFrameSplitter) -> Int { splitter.maxMessageBytes }

    /// The split of the whole stream at once: NUL-separated segments, stopping at the first
    /// segment (complete or not) over the limit.
    static func reference(_ stream: [UInt8], limit: Int) -> Outcome {
        var outcome = Outcome()
        let segments = stream.split(separator: 0, omittingEmptySubsequences: false)
        for (index, segment) in segments.enumerated() {
            if segment.count > limit {
                outcome.tooLarge = true
                break
            }
            // The last segment has no NUL after it: it is an incomplete message.
            if index == segments.count - 1 { break }
            outcome.messages.append(Array(segment))
            outcome.consumed += segment.count + 1
        }
        return outcome
    }
}

/// Message decoding: a call envelope, then the parameters of the method it names.
enum VarlinkMessageFuzzCheck {
    static let codec = VarlinkCodec()

    static func check(_ input: [UInt8]) -> String? {
        let data = Data(input)
        let header: VarlinkCallHeader?
        var deliberatelyStricter = false
        do {
            header = try codec.decodeHeader(data)
        } catch {
            if let problem = errorProblem(error, name: "io.cordon.Agent.InvalidMessage", parameter: "reason") {
                return problem
            }
            let reason = error.parameters["reason"]?.stringValue ?? ""
            deliberatelyStricter = stricterThanFoundation.contains { reason.contains($0) }
            header = nil
        }
        if !deliberatelyStricter, let problem = agreesWithJSONValue(header, data) { return problem }
        if let header, let problem = headerRoundTrips(header) { return problem }
        let methods = Method.allCases
        let method = header.flatMap { Method(rawValue: $0.method) } ?? methods[input.count % methods.count]
        return VarlinkParameterFuzzCheck.check(method, data)
    }

    /// What the agent's parser refuses on purpose where Foundation's accepts: a repeated member
    /// name (parsers disagree on which wins), a trailing comma, deeper nesting, numbers beyond a
    /// Double.
    static let stricterThanFoundation = ["appears twice", "trailing comma", "nested deeper", "number out of range"]

    /// Decoding the same bytes as an open `JSONValue` must agree on the envelope when it succeeds.
    static func agreesWithJSONValue(_ header: VarlinkCallHeader?, _ data: Data) -> String? {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: data) else { return nil }
        var expected: VarlinkCallHeader?
        if case .object(let members) = value, case .string(let method)? = members["method"] {
            var flags: [Bool] = []
            for name in ["more", "oneway", "upgrade"] {
                switch members[name] {
                case nil, .null?: flags.append(false)
                case .bool(let flag)?: flags.append(flag)
                default: break
                }
            }
            if flags.count == 3 {
                expected = VarlinkCallHeader(method: method, more: flags[0], oneway: flags[1], upgrade: flags[2])
            }
        }
        return header == expected ? nil : "decodeHeader gave \(String(describing: header)), JSONValue \(value)"
    }

    /// A decoded envelope, encoded again, decodes to itself; its method splits at the last dot.
    static func headerRoundTrips(_ header: VarlinkCallHeader) -> String? {
        let split =
            header.method.contains(".")
            ? header.interface + "." + header.member == header.method
            : header.interface.isEmpty && header.member == header.method
        if !split {
            return "interface \(header.interface) and member \(header.member) do not make \(header.method)"
        }
        let members: [String: JSONValue] = [
            "method": .string(header.method), "more": .bool(header.more), "oneway": .bool(header.oneway),
            "upgrade": .bool(header.upgrade),
        ]
        guard let encoded = try? codec.encode(members) else { return "the envelope does not encode" }
        guard let again = try? codec.decodeHeader(encoded), again == header else {
            return "the re-encoded envelope \(String(decoding: encoded, as: UTF8.self)) does not decode to itself"
        }
        return nil
    }

    /// `error` is a `VarlinkError` named `name` whose string `parameter` survives an error reply.
    static func errorProblem(_ error: any Error, name: String, parameter: String) -> String? {
        guard let error = error as? VarlinkError, error.name == name else { return "unexpected error \(error)" }
        guard error.parameters[parameter]?.stringValue != nil else { return "\(name) without \(parameter)" }
        let reply = codec.encodeError(error)
        guard let decoded = try? JSONDecoder().decode(VarlinkReply<[String: JSONValue]>.self, from: reply),
            decoded.error == error.name, decoded.parameters ?? [:] == error.parameters
        else { return "the error reply \(String(decoding: reply, as: UTF8.self)) does not decode to \(error)" }
        return nil
    }
}

/// Typed parameters: each method's type decodes or names a parameter it has; what decodes
/// survives being encoded into a call and decoded again.
enum VarlinkParameterFuzzCheck {
    static func check(_ method: Method, _ data: Data) -> String? {
        switch method {
        case .service(.getInfo), .agent(.getStatus), .agent(.lock), .agent(.logout), .agent(.listApps), .app(.getKey),
            .app(.reportActivity), .policy(.getEffective),
            .policy(.reload), .policy(.getStatus), .posture(.get):
            return roundTrip(NoParameters.self, method, data, fields: [])
        case .service(.getInterfaceDescription):
            return roundTrip(InterfaceDescriptionParameters.self, method, data, fields: ["interface"])
        case .agent(.initialize): return roundTrip(InitializeParameters.self, method, data, fields: ["passcode"])
        case .agent(.unlock): return roundTrip(UnlockParameters.self, method, data, fields: ["passcode"])
        case .agent(.changePasscode):
            return roundTrip(ChangePasscodeParameters.self, method, data, fields: ["old", "new"])
        case .agent(.wipe): return roundTrip(WipeParameters.self, method, data, fields: ["confirm", "passcode"])
        case .app(.register): return roundTrip(RegisterParameters.self, method, data, fields: ["appId", "pid"])
        case .app(.subscribe): return roundTrip(SubscribeParameters.self, method, data, fields: ["token"])
        case .app(.acknowledge): return roundTrip(AcknowledgeParameters.self, method, data, fields: ["seq", "status"])
        case .app(.requestUnlock):
            return roundTrip(RequestUnlockParameters.self, method, data, fields: ["appId", "timeoutSeconds", "token"])
        case .app(.shareDocument):
            return roundTrip(ShareDocumentParameters.self, method, data, fields: ["path", "contentType", "target"])
        case .app(.openDocument): return roundTrip(OpenDocumentParameters.self, method, data, fields: ["id", "token"])
        case .pasteboard(.copy):
            return roundTrip(PasteboardCopyParameters.self, method, data, fields: ["content", "mimeType"])
        case .pasteboard(.paste), .pasteboard(.clear): return roundTrip(NoParameters.self, method, data, fields: [])
        case .app(.check):
            return roundTrip(CheckParameters.self, method, data, fields: ["action", "target", "context"])
        case .policy(.validate):
            return roundTrip(ValidateParameters.self, method, data, fields: ["document", "path", "user"])
        case .policy(.explain):
            return roundTrip(ExplainParameters.self, method, data, fields: ["appId", "action", "target", "context"])
        case .audit(.query), .audit(.follow):
            return roundTrip(AuditQueryParameters.self, method, data, fields: ["since", "appId", "limit"])
        // MARK: Storage (#13)
        case .storage(.put):
            return roundTrip(
                StoragePutParameters.self, method, data, fields: ["namespace", "name", "value", "appId", "passcode"])
        case .storage(.get), .storage(.delete):
            return roundTrip(
                StorageRecordParameters.self, method, data, fields: ["namespace", "name", "appId", "passcode"])
        case .storage(.list):
            return roundTrip(
                StorageListParameters.self, method, data, fields: ["namespace", "prefix", "appId", "passcode"])
        case .storage(.usage): return roundTrip(NoParameters.self, method, data, fields: [])
        case .storage(.wipeApp), .storage(.exportIdentity):
            return roundTrip(StorageWipeAppParameters.self, method, data, fields: ["appId", "passcode"])
        // MARK: Tokens (#14)
        case .tokens(.import):
            return roundTrip(
                TokenImportParameters.self, method, data, fields: ["data", "password", "pin", "nickname", "passcode"])
        case .tokens(.list): return roundTrip(TokenPasscodeParameters.self, method, data, fields: ["passcode"])
        case .tokens(.code):
            return roundTrip(TokenCodeParameters.self, method, data, fields: ["serial", "pin", "passcode"])
        case .tokens(.rename):
            return roundTrip(TokenRenameParameters.self, method, data, fields: ["serial", "nickname", "passcode"])
        case .tokens(.remove):
            return roundTrip(TokenRemoveParameters.self, method, data, fields: ["serial", "passcode"])
        case .tokens(.reset): return roundTrip(TokenResetParameters.self, method, data, fields: ["passcode"])
        // MARK: Recovery key (#12)
        case .agent(.recover):
            return roundTrip(RecoverParameters.self, method, data, fields: ["recoveryKey", "passcode"])
        // MARK: Fingerprint unlock (#15)
        case .agent(.unlockWithFingerprint): return roundTrip(NoParameters.self, method, data, fields: [])
        case .agent(.setBiometrics):
            return roundTrip(SetBiometricsParameters.self, method, data, fields: ["enabled", "passcode"])
        // MARK: Posture (#16)
        case .posture(.report):
            return roundTrip(PostureReportParameters.self, method, data, fields: ["nonce", "passcode", "token"])
        case .posture(.getKey): return roundTrip(NoParameters.self, method, data, fields: [])
        // MARK: Identity broker (#15)
        case .identity(.getToken): return roundTrip(IdentityTokenParameters.self, method, data, fields: ["domain"])
        case .identity(.signIn), .identity(.signOut):
            return roundTrip(IdentityProviderParameters.self, method, data, fields: ["provider"])
        case .identity(.status): return roundTrip(NoParameters.self, method, data, fields: [])
        // MARK: Pinned channel
        case .app(.getNetworkPolicy): return roundTrip(GetNetworkPolicyParameters.self, method, data, fields: ["token"])
        case .app(.reportChannelCuts):
            return roundTrip(ReportChannelCutsParameters.self, method, data, fields: ["cuts", "token"])
        }
    }

    /// The canonical encoding: sorted keys, so equal values encode to equal bytes.
    static func canonical(_ value: some Encodable) -> Data? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try? encoder.encode(value)
    }

    static func roundTrip<P: Codable & Sendable>(_ type: P.Type, _ method: Method, _ data: Data, fields: Set<String>)
        -> String?
    {
        let codec = VarlinkMessageFuzzCheck.codec
        let parameters: P
        do {
            parameters = try codec.decodeParameters(type, from: data)
        } catch {
            let name = error.parameters["parameter"]?.stringValue ?? ""
            guard fields.contains(name) || name == "parameters" else {
                return "\(method.rawValue): InvalidParameter names \(name), not one of \(fields.sorted())"
            }
            return VarlinkMessageFuzzCheck.errorProblem(
                error, name: "org.varlink.service.InvalidParameter", parameter: "parameter")
        }
        guard let first = canonical(parameters) else { return "\(method.rawValue): decoded parameters do not encode" }
        let call = VarlinkCall(method: method.rawValue, parameters: parameters)
        guard let encoded = try? codec.encode(call), let header = try? codec.decodeHeader(encoded),
            header.method == method.rawValue
        else { return "\(method.rawValue): the re-encoded call has no valid envelope" }
        guard let again = try? codec.decodeParameters(type, from: encoded), canonical(again) == first else {
            return "\(method.rawValue): \(String(decoding: encoded, as: UTF8.self)) does not decode to its parameters"
        }
        return nil
    }
}

#if !CORDON_FUZZER
    @Suite("Fuzz corpora and regressions: varlink")
    struct VarlinkFuzzRegressionTests {
        /// `Fuzz/corpus/NAME/` and `Fuzz/regressions/NAME/` files, by path.
        static func inputs(_ target: String) -> [String] {
            let root = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
                .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Fuzz")
            return ["corpus", "regressions"].flatMap { kind -> [String] in
                let directory = root.appendingPathComponent(kind).appendingPathComponent(target)
                let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
                return names.filter { !$0.hasPrefix(".") }.sorted().map { directory.appendingPathComponent($0).path }
            }
        }

        static let frameInputs = inputs("varlink-frame")
        static let messageInputs = inputs("varlink-message")

        @Test func theCorporaAreThere() {
            #expect(Self.frameInputs.count >= 10)
            #expect(Self.messageInputs.count >= Method.allCases.count)
        }

        @Test(arguments: frameInputs)
        func frameInputKeepsTheInvariants(_ path: String) throws {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(VarlinkFrameFuzzCheck.check(bytes) == nil)
        }

        @Test(arguments: messageInputs)
        func messageInputKeepsTheInvariants(_ path: String) throws {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(VarlinkMessageFuzzCheck.check(bytes) == nil)
        }

        @Test func splitterAcceptsAMessageAtTheLimitAndRefusesOneOver() {
            var splitter = VarlinkFrameSplitter(maxMessageBytes: 3)
            #expect(splitter.scan(Array("abc\0".utf8)) == .message(length: 3))
            #expect(splitter.scan(Array("abcd\0".utf8)) == .tooLarge)
            #expect(splitter.scan(Array("\0".utf8)) == .message(length: 0))
        }

        @Test func splitterRefusesAnOversizedMessageBeforeItsNUL() {
            var splitter = VarlinkFrameSplitter(maxMessageBytes: 3)
            #expect(splitter.scan(Array("abc".utf8)) == .needMoreData)
            #expect(splitter.scan(Array("abcd".utf8)) == .tooLarge)
        }

        /// Bytes already searched are not searched again, and a slice's indices (like a
        /// `ByteBufferView`'s, which start at the reader index) are honoured.
        @Test func splitterResumesWhereItStoppedInASlice() {
            let bytes = Array("xx{\"a\":1}\0rest".utf8)
            var splitter = VarlinkFrameSplitter(maxMessageBytes: 64)
            #expect(splitter.scan(bytes[2..<6]) == .needMoreData)
            #expect(splitter.scan(bytes[2..<10]) == .message(length: 7))
            #expect(splitter.scan(bytes[10...]) == .needMoreData)
        }

        /// The corpus has a valid call for every method, and each decodes to that method.
        @Test func everyMethodHasAValidSeed() throws {
            var seen: Set<String> = []
            for path in Self.messageInputs {
                let data = try Data(contentsOf: URL(fileURLWithPath: path))
                if let header = try? VarlinkCodec().decodeHeader(data) { seen.insert(header.method) }
            }
            #expect(Set(Method.allCases.map(\.rawValue)).subtracting(seen).isEmpty)
        }
    }
#endif
