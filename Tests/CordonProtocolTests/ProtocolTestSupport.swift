import CordonProtocol
import Foundation

/// The bytes of a JSON text.
func json(_ text: String) -> Data { Data(text.utf8) }

/// Parses JSON bytes into a `JSONValue` for structural comparison.
func parse(_ data: Data) throws -> JSONValue {
    try JSONDecoder().decode(JSONValue.self, from: data)
}

/// The member names of the JSON object `value` encodes to.
func jsonKeys<T: Encodable>(_ value: T) throws -> Set<String> {
    let data = try JSONEncoder().encode(value)
    guard case .object(let members) = try parse(data) else { return [] }
    return Set(members.keys)
}

/// One instance of every `CordonError` case, with distinctive parameters.
let everyCordonError: [CordonError] = [
    .notInitialized,
    .alreadyInitialized,
    .wrongPasscode(
        attemptsLeft: 3, retryAfterSeconds: 2.5, maxAttemptsLeft: 7, hardwareAttemptsLeft: 3,
        maxAttemptsAction: "lockout"
    ),
    .retryLater(retryAfterSeconds: 30.25),
    .passcodeRequired,
    .invalidPasscode(reason: "the passcode must have at least 4 characters"),
    .locked,
    .busy,
    .revoked(reason: "logout"),
    .unknownAction(action: "x.y"),
    .refused(appId: "com.example.a", reason: "r"),
    .notRegistered,
    .alreadyRegistered(appId: "com.example.notes"),
    .invalidAppId(appId: "bad id", reason: "spaces are not allowed"),
    .keyUnavailable(state: "lockedNoKey"),
    .notManaged(appId: "com.example.viewer"),
    .subscriberTooSlow(limit: 256),
    .invalidToken,
    .unknownSequence(seq: 42),
    .internalError(reason: "the database is unavailable"),
    .unlockUnavailable(reason: "no pinentry program is configured"),
    .unlockCancelled,
    .unlockTimedOut(seconds: 120),
    .denied(action: "pasteboard.paste", reason: "copy out is blocked", rules: ["admin.json#/pasteboard/copyOut"]),
    .targetNotRunning(appId: "com.example.mail"),
    .pasteboardEmpty,
    .contentTooLarge(limit: 1_048_576),
    .invalidProcess(pid: 4242, reason: "not a child of the caller"),
    .processChanged(appId: "com.example.notes", reason: "the process now runs another executable (it exec'd)"),
    .processNotHardened(appId: "com.example.notes"),
    .registeredOnBehalf(appId: "com.example.notes"), .appIdInUse(appId: "com.example.notes", pid: 4242),
    .tooManyConnections(limit: 4096),
    .tooManyProcessConnections(pid: 4242, limit: 64),
    .connectionIdle(seconds: 900),
    .foreignSender(pid: 4242, sender: 4243),
    // MARK: Storage (#13)
    .containerLocked(appId: "com.example.notes", state: "lockedKeyHeld"),
    .recordNotFound(namespace: "default", name: "draft"), .valueTooLarge(size: 40000, limit: 32768),
    .invalidRecordName(field: "name", reason: "contains a NUL byte"),
    .recordTampered(namespace: "default", name: "draft"),
    .storageFailed(appId: "com.example.notes", reason: "the disk is full"),
    // MARK: Tokens (#14)
    .duplicateToken(serial: "000123456789"), .tokenNotFound(serial: "oath-0011223344556677"),
    .tokenExpired(expiryDay: "2035-12-31"), .tokenBoundElsewhere(reason: "the token is bound to another device"),
    .tokenFormat(field: "ctfData", reason: "a v2 CTF string has 81 digits"), .tokenLimit(maximum: 10),
    .pinRequired(serial: "000123456789"), .tokenKindNotAllowed(kind: "sdtid"),
    .notCodeReader(appId: "com.example.mail"), .tokensLocked(state: "lockedKeyHeld"),
    // MARK: TPM passcode sealing (#12)
    .hardwareRequired(reason: "no TPM at device:/dev/tpmrm0"),
    .hardwareLockedOut(retryAfterSeconds: 600.5),
    .hardwareKeyRejected(reason: "the PCRs the key is bound to have changed"),
    .hardwareUnavailable(reason: "no TPM"),
    .stateRolledBack(reason: "the database is older than the TPM's counter"),
    // MARK: Pinned channel (#32)
    .invalidClientCertificate(
        parameter: "network.clientCertificate.key", path: "/etc/cordon/client.key", reason: "it does not exist"),
    .invalidRecoveryKey(reason: "group 3 is not a multiple of 11"),
    // MARK: CT-KIP (#14)
    .ctkipFailed(server: "127.0.0.1:4443", step: "ServerHello", reason: "the answer is not a SOAP envelope"),
    .ctkipInsecureNotAllowed(server: "127.0.0.1:4443"),
    // MARK: Fingerprint unlock (#15)
    .biometricsDisabled,
    .biometricsNotEnabled,
    .biometricsPasscodeNeeded(reason: "more than 48 hours since the last passcode unlock"),
    .biometricsUnavailable(reason: "no finger is enrolled for this user (fprintd-enroll)"),
    // MARK: Posture (#16)
    .postureRefused(appId: "com.example.notes", check: "secureBoot", evidence: "SecureBoot EFI variable: 0"),
    .invalidNonce(reason: "it is empty"),
    // MARK: Identity broker (#15)
    .identityUnknownDomain(domain: "mail.corp.example"),
    .identityUnknownProvider(provider: "corp", known: ["local", "other"]),
    .identityNotInAccessGroup(appId: "com.example.games", domain: "mail.corp.example"),
    .identityLocked(state: "lockedKeyHeld"),
    .signInCancelled(provider: "corp", step: "token"),
    .signInExpired(provider: "corp", step: "token"),
    .signInFailed(provider: "corp", step: "refresh", reason: "corp: refresh: the provider is unreachable"),
    .sessionExpired(provider: "corp"),
]

/// The IDL of one interface, parsed just enough to compare it with the Swift types.
struct ParsedInterface {
    let name: String
    let text: String

    init(name: String, text: String) {
        self.name = name
        self.text = text
    }

    /// The lines that are not comments or blank.
    var declarationLines: [Substring] {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.drop { $0 == " " } }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    /// The range inside the parentheses that open at `open`, up to the matching close.
    private func balanced(from open: String.Index) -> Range<String.Index>? {
        var depth = 0
        var index = open
        while index < text.endIndex {
            if text[index] == "(" { depth += 1 }
            if text[index] == ")" {
                depth -= 1
                if depth == 0 { return text.index(after: open)..<index }
            }
            index = text.index(after: index)
        }
        return nil
    }

    /// The range of the parenthesized list right after `keyword Member` (spaces allowed before it).
    func parenthesizedRange(after keyword: String, _ member: String) -> Range<String.Index>? {
        var searchStart = text.startIndex
        while let range = text.range(of: "\(keyword) \(member)", range: searchStart..<text.endIndex) {
            let rest = text[range.upperBound...]
            if let open = rest.firstIndex(where: { $0 != " " }), text[open] == "(" {
                return balanced(from: open)
            }
            searchStart = range.upperBound
        }
        return nil
    }

    /// The text inside the parenthesized list right after `keyword Member`.
    func parenthesized(after keyword: String, _ member: String) -> String? {
        parenthesizedRange(after: keyword, member).map { String(text[$0]) }
    }

    /// The field names of a parenthesized list, at the top level only.
    static func fieldNames(_ list: String) -> [String] {
        var fields: [String] = []
        var depth = 0
        var current = ""
        for character in list {
            if character == "(" { depth += 1 }
            if character == ")" { depth -= 1 }
            if character == "," && depth == 0 {
                fields.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        fields.append(current)
        return fields.compactMap { field in
            let trimmed = field.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty else { return nil }
            return String(trimmed.prefix { $0 != ":" }).trimmingCharacters(in: .whitespaces)
        }
    }

    /// A method's input fields.
    func methodInput(_ member: String) -> [String]? {
        parenthesized(after: "method", member).map(Self.fieldNames)
    }

    /// A method's output fields (the list after `->`).
    func methodOutput(_ member: String) -> [String]? {
        guard let input = parenthesizedRange(after: "method", member) else { return nil }
        let rest = text[text.index(after: input.upperBound)...].drop { $0 == " " }
        guard rest.hasPrefix("->") else { return nil }
        let afterArrow = rest.dropFirst(2).drop { $0 == " " }
        guard afterArrow.first == "(", let output = balanced(from: afterArrow.startIndex) else { return nil }
        return Self.fieldNames(String(text[output]))
    }

    /// An error's parameter names.
    func errorParameters(_ member: String) -> [String]? {
        parenthesized(after: "error", member).map(Self.fieldNames)
    }

    /// The fields (or enum values) of a type.
    func typeFields(_ member: String) -> [String]? {
        parenthesized(after: "type", member).map(Self.fieldNames)
    }

    /// Every name declared with `keyword` (method, error, type).
    func declared(_ keyword: String) -> [String] {
        declarationLines.compactMap { line in
            guard line.hasPrefix(keyword + " ") else { return nil }
            return String(line.dropFirst(keyword.count + 1).prefix { $0 != "(" && $0 != " " })
        }
    }
}

extension InterfaceDescriptions {
    static func parsed(_ name: String) -> ParsedInterface? {
        all[name].map { ParsedInterface(name: name, text: $0) }
    }
}

extension Method {
    /// The interface part of the method name.
    var interfaceName: String { VarlinkCallHeader(method: rawValue).interface }
    /// The member part of the method name.
    var memberName: String { VarlinkCallHeader(method: rawValue).member }
}
