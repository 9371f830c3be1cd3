import Crypto
import Foundation
import Testing
import _CryptoExtras

@testable import CordonTokens

/// `CTKIPClient` against a server played here with its own RSA key: the server decrypts the OAEP
/// nonce, derives the seed with `CTKIPPRF` and MACs it, as the rsa-ct-kip fake server does. Each
/// lie of the server (a fault, another activation code, a wrong MAC, a failed status, bad XML)
/// is an error naming its step.
@Suite struct CTKIPClientTests {
    static let code = "123456789012"
    let key: _RSA.Encryption.PrivateKey

    init() throws {
        // RSA's CT-KIP servers use 1024-bit keys (as the rsa-ct-kip fake server does).
        key = try _RSA.Encryption.PrivateKey(unsafeKeySize: .init(bitCount: 1024))
    }

    static func envelope(auth: String = code, provisioning: String, response: String) -> [UInt8] {
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>
            <ServerResponse xmlns="http://ctkipservice.rsasecurity.com"><AuthData>\(auth)</AuthData>
            <ProvisioningData>\(Base64.encode(Array(provisioning.utf8)))</ProvisioningData>
            <Response>\(Base64.encode(Array(response.utf8)))</Response></ServerResponse></soapenv:Body></soapenv:Envelope>
            """
        return Array(text.utf8)
    }

    var modulus: [UInt8] {
        // The modulus from the key's PKCS#1 DER: SEQUENCE { INTEGER n, INTEGER e }.
        let der = Array(key.publicKey.pkcs1DERRepresentation)
        var index = der[1] & 0x80 != 0 ? 2 + Int(der[1] & 0x7f) : 2
        index += 1
        var length = Int(der[index])
        index += 1
        if length & 0x80 != 0 {
            let count = length & 0x7f
            length = der[index..<index + count].reduce(0) { $0 << 8 | Int($1) }
            index += count
        }
        return Array(der[index..<index + length].drop { $0 == 0 })
    }

    func serverHello(nonce: [UInt8]) -> [UInt8] {
        Self.envelope(
            provisioning: "<ProvisioningData/>",
            response: """
                <?xml version="1.0"?><ServerHello xmlns="urn:x" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" SessionID="s&amp;1" Status="Continue">\
                <EncryptionKey><ds:KeyValue><ds:RSAKeyValue><ds:Modulus>\(Base64.encode(modulus))</ds:Modulus>
                <ds:Exponent>AQAB</ds:Exponent></ds:RSAKeyValue></ds:KeyValue></EncryptionKey>
                <Payload><Nonce>\(Base64.encode(nonce))</Nonce></Payload></ServerHello>
                """)
    }

    func serverFinished(mac: [UInt8], status: String = "Success", serial: String = "742289721948") -> [UInt8] {
        Self.envelope(
            provisioning: "<ProvisioningData><PinType>0</PinType><AddPIN>1</AddPIN></ProvisioningData>",
            response: """
                <ServerFinished SessionID="s&amp;1" Status="\(status)"><TokenID>\(Base64.encode(Array(serial.utf8)))</TokenID>
                <KeyID>\(Base64.encode(Array(serial.utf8)))</KeyID><KeyExpiryDate>2027-11-24T00:00:00+00:00</KeyExpiryDate>
                <Extensions><Extension Critical="true"><OTPFormat>Decimal</OTPFormat><OTPLength>8</OTPLength>
                <OTPMode><Time TimeInterval="60"/></OTPMode></Extension></Extensions>
                <Mac MacAlgorithm="x">\(Base64.encode(mac))</Mac></ServerFinished>
                """)
    }

    /// The server's side of the ClientNonce: the decrypted client nonce, and the echoed server nonce.
    func open(_ request: [UInt8]) throws -> (clientNonce: [UInt8], sessionID: String) {
        let envelope = try BoundedXML.parse(request)
        let inner = try #require(envelope.local("Body")?.local("ClientRequest")?.local("Request")?.text)
        #expect(envelope.local("Body")?.local("ClientRequest")?.local("AuthData")?.text == Self.code)
        let message = try BoundedXML.parse(try Base64.decode(inner, field: "Request"))
        #expect(message.localName == "ClientNonce")
        let encrypted = try Base64.decode(try #require(message.local("EncryptedNonce")?.text), field: "n")
        let nonce = try key.decrypt(encrypted, padding: .PKCS1_OAEP)
        return (Array(nonce), message.attributes["SessionID"] ?? "")
    }

    func exchange() throws -> (CTKIPClient, seed: [UInt8], clientNonce: [UInt8]) {
        var client = CTKIPClient(activationCode: Self.code) { Array(repeating: 0x5a, count: $0) }
        let hello = client.clientHello()
        let request = try BoundedXML.parse(hello).local("Body")?.local("ClientRequest")?.local("Request")?.text
        #expect(try BoundedXML.parse(Base64.decode(request ?? "", field: "Request")).localName == "ClientHello")
        #expect(client.soapAction == "StartService")
        let serverNonce = [UInt8](repeating: 0x33, count: 16)
        let nonceRequest = try client.clientNonce(answering: serverHello(nonce: serverNonce))
        #expect(client.soapAction == "ServerFinished")
        let (nonce, session) = try open(nonceRequest)
        #expect(nonce == [UInt8](repeating: 0x5a, count: 16))
        #expect(session == "s&1")
        let seed = CTKIPPRF.tokenKey(clientNonce: nonce, serverModulus: modulus, serverNonce: serverNonce)
        return (client, seed, nonce)
    }

    @Test func theTokenIsTheSeedTheServerDerivedWithItsFormat() throws {
        var (client, seed, nonce) = try exchange()
        let token = try client.finish(serverFinished(mac: CTKIPPRF.serverMAC(tokenKey: seed, clientNonce: nonce)))
        #expect(token.seed == seed)
        #expect(token.serial == "742289721948")
        #expect((token.digits, token.interval, token.pinMode) == (8, 60, .pinPad))
        #expect(token.expiryDay == "2027-11-25")
        #expect(client.state == .finished)
    }

    @Test func aWrongMACOrStatusIsRefusedAtServerFinished() throws {
        var (client, seed, nonce) = try exchange()
        #expect(throws: CTKIPError(.serverFinished, "the server's MAC does not prove the same token key")) {
            try client.finish(serverFinished(mac: [UInt8](repeating: 0, count: 16)))
        }
        let mac = CTKIPPRF.serverMAC(tokenKey: seed, clientNonce: nonce)
        #expect(throws: CTKIPError(.serverFinished, "the status is Failure, not Success")) {
            try client.finish(serverFinished(mac: mac, status: "Failure"))
        }
        #expect(throws: CTKIPError(.serverFinished, "the KeyID is not a serial of up to 12 digits")) {
            try client.finish(serverFinished(mac: mac, serial: "12ab"))
        }
    }

    @Test func faultsOtherCodesAndGarbageAreRefusedAtServerHello() throws {
        let fault = Array(
            #"<e:Envelope xmlns:e="x"><e:Body><e:Fault><faultcode>e:Server</faultcode><faultstring>Activation code expired</faultstring></e:Fault></e:Body></e:Envelope>"#
                .utf8)
        let cases: [([UInt8], String)] = [
            (fault, "the server answered a SOAP fault: Activation code expired"),
            (
                Self.envelope(auth: "999", provisioning: "<P/>", response: "<ServerHello/>"),
                "the server answered for another activation code"
            ),
            (Array("not xml".utf8), "the SOAP envelope is not well-formed XML"),
            (
                Self.envelope(provisioning: "<P/>", response: "<ServerFinished/>"),
                "the server answered <ServerFinished>, not a ServerHello"
            ),
            (
                Self.envelope(provisioning: "<P/>", response: #"<ServerHello SessionID="1"/>"#),
                "it has no EncryptionKey/KeyValue/RSAKeyValue"
            ),
        ]
        for (answer, reason) in cases {
            var client = CTKIPClient(activationCode: Self.code) { Array(repeating: 1, count: $0) }
            _ = client.clientHello()
            do {
                _ = try client.clientNonce(answering: answer)
                Issue.record("accepted: \(reason)")
            } catch {
                #expect(error.step == .serverHello)
                #expect(error.reason.hasPrefix(reason), "\(error.reason)")
                #expect(!error.reason.contains(Self.code) || reason.contains("fault"))
            }
        }
    }

    @Test func theProvisioningURLNamesItsServerAndCode() throws {
        let parsed = try CTKIPProvisioning.parse(
            "com.rsa.securid://ctkip?url=https%3A%2F%2Fctkip.example.com%3A443%2Fctkip%2Fservices%2FCtkipService&activationCode=123456789012"
        )
        #expect(parsed.url == "https://ctkip.example.com:443/ctkip/services/CtkipService")
        #expect(parsed.server == "ctkip.example.com:443")
        #expect(parsed.activationCode == "123456789012")
        #expect(TokenImporter.kind(of: "com.rsa.securid://ctkip?url=x") == .ctkip)
        #expect(
            throws: TokenFormatError.invalidField(
                field: "url", reason: "the CT-KIP server must be an https:// URL without spaces")
        ) {
            try CTKIPProvisioning.parse("com.rsa.securid://ctkip?url=http%3A%2F%2Fa&activationCode=1")
        }
        #expect(
            throws: TokenFormatError.invalidField(
                field: "activationCode", reason: "the CT-KIP URL has no activationCode parameter")
        ) {
            try CTKIPProvisioning.parse("com.rsa.securid://ctkip?url=https%3A%2F%2Fa")
        }
    }
}
