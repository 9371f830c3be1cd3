/// The XML of RSA's CT-KIP dialect (as the rsa-ct-kip client and RSA's software send it): each
/// CT-KIP message travels base64-encoded inside a SOAP `ClientRequest`/`ServerResponse` together
/// with a `ProvisioningData` document and the activation code as `AuthData`.
enum CTKIPMessages {
    static let provisioningData =
        #"<?xml version="1.0"?><ProvisioningData><Version>5.0.2.440</Version><Manufacturer>RSA Security Inc.</Manufacturer><FormFactor/></ProvisioningData>"#

    static let clientHello =
        #"<ClientHello xmlns="http://www.rsasecurity.com/rsalabs/otps/schemas/2005/11/ct-kip#" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" Version="1.0"><SupportedKeyTypes xmlns=""><Algorithm xsi:type="xsd:anyURI">http://www.rsasecurity.com/rsalabs/otps/schemas/2005/09/otps-wst#SecurID-AES</Algorithm></SupportedKeyTypes><SupportedEncryptionAlgorithms xmlns=""><Algorithm xsi:type="xsd:anyURI">http://www.w3.org/2001/04/xmlenc#rsa-1_5</Algorithm></SupportedEncryptionAlgorithms><SupportedMACAlgorithms xmlns=""><Algorithm xsi:type="xsd:anyURI">http://www.rsasecurity.com/rsalabs/otps/schemas/2005/11/ct-kip#ct-kip-prf-aes</Algorithm></SupportedMACAlgorithms></ClientHello>"#

    /// The ClientNonce message: the session, the encrypted client nonce, the server nonce echoed.
    static func clientNonce(sessionID: String, encryptedNonce: [UInt8], serverNonce: [UInt8]) -> String {
        #"<?xml version="1.0" encoding="UTF-8"?><ClientNonce xmlns="http://www.rsasecurity.com/rsalabs/otps/schemas/2005/11/ct-kip#" Version="1.0" SessionID=""#
            + escaped(sessionID)
            + #""><EncryptedNonce xmlns="">"# + Base64.encode(encryptedNonce)
            + #"</EncryptedNonce><Extensions xmlns="" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><Extension xmlns="" xmlns:ct-kip="http://www.rsasecurity.com/rsalabs/otps/schemas/2005/12/ct-kip#" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><Data>"#
            + Base64.encode(serverNonce) + "</Data></Extension></Extensions></ClientNonce>"
    }

    /// The SOAP envelope around one message.
    static func envelope(authData: String, message: String) -> [UInt8] {
        let text =
            #"<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body><ClientRequest xmlns="http://ctkipservice.rsasecurity.com"><AuthData>"#
            + escaped(authData) + "</AuthData><ProvisioningData>" + Base64.encode(Array(provisioningData.utf8))
            + "</ProvisioningData><Request>" + Base64.encode(Array(message.utf8))
            + "</Request></ClientRequest></soapenv:Body></soapenv:Envelope>"
        return Array(text.utf8)
    }

    /// The `ProvisioningData` and `Response` documents of a server's SOAP answer, after checking
    /// that it answers `authData`; a SOAP fault is an error with its `faultstring`.
    static func openResponse(_ bytes: [UInt8], authData: String, step: CTKIPStep) throws(CTKIPError)
        -> (provisioning: XMLElement, response: XMLElement)
    {
        let envelope = try parse(bytes, step: step, what: "the SOAP envelope")
        guard envelope.localName == "Envelope", let body = envelope.local("Body") else {
            throw CTKIPError(step, "the answer is not a SOAP envelope")
        }
        if let fault = body.local("Fault") {
            let text = String((fault.local("faultstring")?.text ?? "no faultstring").prefix(200))
            throw CTKIPError(step, "the server answered a SOAP fault: \(text)")
        }
        guard let response = body.local("ServerResponse") else {
            throw CTKIPError(step, "the SOAP body has no ServerResponse")
        }
        guard response.local("AuthData")?.text.trimmingWhitespace() == authData else {
            throw CTKIPError(step, "the server answered for another activation code")
        }
        guard let provisioning = response.local("ProvisioningData"), let inner = response.local("Response") else {
            throw CTKIPError(step, "the ServerResponse has no ProvisioningData or Response")
        }
        let provisioningDocument = try parse(
            base64(provisioning.text, step: step, what: "ProvisioningData"), step: step,
            what: "the ProvisioningData document")
        let responseDocument = try parse(
            base64(inner.text, step: step, what: "Response"), step: step, what: "the Response document")
        return (provisioningDocument, responseDocument)
    }

    static func parse(_ bytes: [UInt8], step: CTKIPStep, what: String) throws(CTKIPError) -> XMLElement {
        var limits = BoundedXML.Limits()
        limits.document = 64 * 1024
        limits.elements = 256
        do {
            return try BoundedXML.parse(bytes, limits: limits)
        } catch {
            throw CTKIPError(step, "\(what) is not well-formed XML: \(error)")
        }
    }

    /// Base64 with any whitespace (line breaks) removed.
    static func base64(_ text: String, step: CTKIPStep, what: String) throws(CTKIPError) -> [UInt8] {
        let compact = String(text.unicodeScalars.filter { !" \t\r\n".unicodeScalars.contains($0) })
        do {
            return try Base64.decode(compact, field: what)
        } catch {
            throw CTKIPError(step, "\(what) is not base64")
        }
    }

    static func escaped(_ text: String) -> String {
        var output = ""
        for character in text {
            switch character {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            case "'": output += "&apos;"
            default: output.append(character)
            }
        }
        return output
    }
}
