import Crypto
import Foundation
import _CryptoExtras

/// The client side of RSA's CT-KIP (RFC 4758 as RSA deploys it; docs/ARCHITECTURE.md, "Tokens") as a
/// pure state machine: it builds each request, reads each answer and, at the end, derives and checks
/// the token. No I/O: the caller carries the bytes (over HTTPS) and injects the randomness.
///
/// The client nonce `R_C` is encrypted with the server's RSA key under RSAES-OAEP with SHA-1 (the
/// messages name `rsa-1_5`, but RSA's servers, and the rsa-ct-kip fake server, decrypt OAEP); the
/// seed is `CTKIPPRF.tokenKey(R_C, modulus, R_S)` and the server proves it has the same seed with
/// its MAC, which is checked before any token is returned.
public struct CTKIPClient: Sendable {
    /// Where the exchange is.
    public enum State: Sendable, Equatable {
        case start
        case sentHello
        case sentNonce
        case finished
    }

    public private(set) var state = State.start
    let activationCode: String
    let random: @Sendable (Int) -> [UInt8]
    private var sessionID = ""
    private var clientNonce: [UInt8] = []
    private var serverNonce: [UInt8] = []
    private var modulus: [UInt8] = []

    /// `random(n)` gives `n` random bytes (the system's generator in the agent; fixed in tests).
    public init(activationCode: String, random: @escaping @Sendable (Int) -> [UInt8]) {
        self.activationCode = activationCode
        self.random = random
    }

    /// The SOAPAction header of the request `clientHello()` or `clientNonce(answering:)` returned last.
    public var soapAction: String { state == .sentNonce ? "ServerFinished" : "StartService" }

    /// The ClientHello request.
    public mutating func clientHello() -> [UInt8] {
        state = .sentHello
        return CTKIPMessages.envelope(authData: activationCode, message: CTKIPMessages.clientHello)
    }

    /// Reads the ServerHello and returns the ClientNonce request.
    public mutating func clientNonce(answering serverHello: [UInt8]) throws(CTKIPError) -> [UInt8] {
        guard state == .sentHello else { throw CTKIPError(.serverHello, "no ClientHello was sent") }
        let (_, hello) = try CTKIPMessages.openResponse(serverHello, authData: activationCode, step: .serverHello)
        guard hello.localName == "ServerHello" else {
            throw CTKIPError(.serverHello, "the server answered <\(hello.name.prefix(64))>, not a ServerHello")
        }
        if let status = hello.attributes["Status"], status != "Continue" {
            throw CTKIPError(.serverHello, "the status is \(status.prefix(32)), not Continue")
        }
        guard let session = hello.attributes["SessionID"], !session.isEmpty, session.utf8.count <= 1024 else {
            throw CTKIPError(.serverHello, "it has no SessionID")
        }
        guard let key = hello.local("EncryptionKey")?.local("KeyValue")?.local("RSAKeyValue"),
            let modulusText = key.local("Modulus")?.text, let exponentText = key.local("Exponent")?.text
        else { throw CTKIPError(.serverHello, "it has no EncryptionKey/KeyValue/RSAKeyValue") }
        let modulus = Array(try CTKIPMessages.base64(modulusText, step: .serverHello, what: "Modulus").drop { $0 == 0 })
        let exponent = try CTKIPMessages.base64(exponentText, step: .serverHello, what: "Exponent")
        guard (128...512).contains(modulus.count) else {
            throw CTKIPError(.serverHello, "the RSA key has \(modulus.count * 8) bits, not 1024 to 4096")
        }
        guard let nonceText = hello.local("Payload")?.local("Nonce")?.text else {
            throw CTKIPError(.serverHello, "it has no Payload/Nonce")
        }
        let nonce = try CTKIPMessages.base64(nonceText, step: .serverHello, what: "Nonce")
        guard (8...64).contains(nonce.count) else {
            throw CTKIPError(.serverHello, "the server nonce has \(nonce.count) bytes, not 8 to 64")
        }
        let publicKey: _RSA.Encryption.PublicKey
        do {
            // RSA's servers use 1024-bit keys: the DER form is the one initializer that takes them.
            publicKey = try _RSA.Encryption.PublicKey(unsafeDERRepresentation: Self.pkcs1(modulus, exponent))
        } catch {
            throw CTKIPError(.serverHello, "the RSA key is not usable")
        }
        clientNonce = random(16)
        let encrypted: [UInt8]
        do {
            encrypted = Array(try publicKey.encrypt(clientNonce, padding: .PKCS1_OAEP))
        } catch {
            throw CTKIPError(.clientNonce, "the nonce could not be encrypted with the server's key")
        }
        (sessionID, serverNonce, self.modulus, state) = (session, nonce, modulus, .sentNonce)
        let message = CTKIPMessages.clientNonce(
            sessionID: session, encryptedNonce: encrypted, serverNonce: nonce)
        return CTKIPMessages.envelope(authData: activationCode, message: message)
    }

    /// Reads the ServerFinished, checks the server's MAC and returns the token.
    public mutating func finish(_ serverFinished: [UInt8]) throws(CTKIPError) -> SecurIDToken {
        guard state == .sentNonce else { throw CTKIPError(.serverFinished, "no ClientNonce was sent") }
        let (provisioning, finished) = try CTKIPMessages.openResponse(
            serverFinished, authData: activationCode, step: .serverFinished)
        guard finished.localName == "ServerFinished" else {
            throw CTKIPError(.serverFinished, "the server answered <\(finished.name.prefix(64))>, not a ServerFinished")
        }
        guard finished.attributes["Status"] == "Success" else {
            throw CTKIPError(
                .serverFinished, "the status is \((finished.attributes["Status"] ?? "absent").prefix(32)), not Success")
        }
        guard finished.attributes["SessionID"] == nil || finished.attributes["SessionID"] == sessionID else {
            throw CTKIPError(.serverFinished, "it answers another session")
        }
        let seed = CTKIPPRF.tokenKey(clientNonce: clientNonce, serverModulus: modulus, serverNonce: serverNonce)
        guard let macText = finished.local("Mac")?.text,
            try CTKIPMessages.base64(macText, step: .serverFinished, what: "Mac")
                == CTKIPPRF.serverMAC(tokenKey: seed, clientNonce: clientNonce)
        else {
            throw CTKIPError(.serverFinished, "the server's MAC does not prove the same token key")
        }
        let serial = try Self.serial(finished)
        let expiryDays = try Self.expiryDays(finished.local("KeyExpiryDate")?.text)
        let format = finished.local("Extensions")?.local("Extension")
        let digits = Int(format?.local("OTPLength")?.text.trimmingWhitespace() ?? "8") ?? 0
        guard (6...8).contains(digits) else { throw CTKIPError(.serverFinished, "OTPLength is not 6 to 8") }
        let intervalText = format?.local("OTPMode")?.local("Time")?.attributes["TimeInterval"] ?? "60"
        guard let interval = Int(intervalText), interval == 30 || interval == 60 else {
            throw CTKIPError(.serverFinished, "the TimeInterval is not 30 or 60")
        }
        let addPIN = (Int(provisioning.local("AddPIN")?.text.trimmingWhitespace() ?? "1") ?? 1) != 0
        // The flags stoken gives the token the rsa-ct-kip client writes: 128-bit, time-derived seeds.
        var flags = SecurIDToken.Flag.bit128 | SecurIDToken.Flag.timeSeeds
        flags |= UInt16(addPIN ? 2 : 0) << SecurIDToken.Flag.pinModeShift
        flags |= UInt16(digits - 1) << SecurIDToken.Flag.digitShift
        if interval == 60 { flags |= 1 }
        state = .finished
        clientNonce = []
        return SecurIDToken.fromFlags(serial: serial, seed: seed, flags: flags, expiryDays: expiryDays)
    }

    /// The 12-digit serial (`KeyID`, else `TokenID`, base64 of its decimal text).
    static func serial(_ finished: XMLElement) throws(CTKIPError) -> String {
        guard let text = (finished.local("KeyID") ?? finished.local("TokenID"))?.text else {
            throw CTKIPError(.serverFinished, "it has no KeyID or TokenID")
        }
        let decoded = String(
            decoding: try CTKIPMessages.base64(text, step: .serverFinished, what: "KeyID"), as: UTF8.self)
        guard (1...12).contains(decoded.count), decoded.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw CTKIPError(.serverFinished, "the KeyID is not a serial of up to 12 digits")
        }
        return String(repeating: "0", count: 12 - decoded.count) + decoded
    }

    /// `KeyExpiryDate` (`YYYY-MM-DD…`) as days after 2000-01-01, as stoken reads the date.
    static func expiryDays(_ text: String?) throws(CTKIPError) -> Int {
        let date = (text ?? "").trimmingWhitespace().prefix(10).split(separator: "-")
        guard date.count == 3, let year = Int(date[0]), let month = Int(date[1]), let day = Int(date[2]),
            (2000...2200).contains(year), (1...12).contains(month), (1...31).contains(day)
        else { throw CTKIPError(.serverFinished, "the KeyExpiryDate is not YYYY-MM-DD") }
        return CivilDate(year: year, month: month, day: day).daysSinceUnixEpoch - Int(SecurIDToken.epoch / 86_400)
    }

    /// A PKCS#1 `RSAPublicKey` (DER) of modulus and exponent.
    static func pkcs1(_ modulus: [UInt8], _ exponent: [UInt8]) -> [UInt8] {
        func length(_ count: Int) -> [UInt8] {
            if count < 0x80 { return [UInt8(count)] }
            let bytes = withUnsafeBytes(of: UInt32(count).bigEndian) { Array($0) }.drop { $0 == 0 }
            return [0x80 | UInt8(bytes.count)] + bytes
        }
        func integer(_ value: [UInt8]) -> [UInt8] {
            var body = Array(value.drop { $0 == 0 })
            if body.isEmpty || body[0] & 0x80 != 0 { body.insert(0, at: 0) }
            return [0x02] + length(body.count) + body
        }
        let content = integer(modulus) + integer(exponent)
        return [0x30] + length(content.count) + content
    }
}
