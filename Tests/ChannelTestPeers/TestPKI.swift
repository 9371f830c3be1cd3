import Foundation

/// Certificates made with `openssl` in a temporary directory: a CA, and leaves it signs.
public final class TestPKI {
    public let directory: URL
    /// The CA certificate's path.
    public let caCertificate: String
    /// The CA key's path.
    public let caKey: String

    /// A new CA in a new temporary directory (removed with the object).
    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("cordon-pki-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        caCertificate = directory.appendingPathComponent("ca.pem").path
        caKey = directory.appendingPathComponent("ca.key").path
        try ChannelCommand.checked([
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", caKey, "-out", caCertificate, "-subj", "/CN=Cordon Test CA", "-days", "3650",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
    }

    /// The CA certificate's PEM text.
    public var caPEM: String { (try? String(contentsOfFile: caCertificate, encoding: .utf8)) ?? "" }

    /// A leaf for `names` (DNS names, or IP addresses) valid for `days` (negative: already expired),
    /// signed by the CA, for `usage` (`serverAuth`, or `clientAuth` for mutual TLS); returns the
    /// paths of its certificate and key.
    public func leaf(_ label: String, names: [String], days: Int = 30, usage: String = "serverAuth") throws -> (
        certificate: String, key: String
    ) {
        let key = directory.appendingPathComponent("\(label).key").path
        let request = directory.appendingPathComponent("\(label).csr").path
        let certificate = directory.appendingPathComponent("\(label).pem").path
        let extensions = directory.appendingPathComponent("\(label).ext").path
        let alternatives = names.map { name in
            name.allSatisfy { $0.isNumber || $0 == "." } ? "IP:\(name)" : "DNS:\(name)"
        }
        try Data(
            "subjectAltName=\(alternatives.joined(separator: ","))\nextendedKeyUsage=\(usage)\nbasicConstraints=CA:FALSE\n"
                .utf8
        ).write(to: URL(fileURLWithPath: extensions))
        try ChannelCommand.checked([
            "openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
            "-out", request, "-subj", "/CN=\(names[0])",
        ])
        try ChannelCommand.checked([
            "openssl", "x509", "-req", "-in", request, "-CA", caCertificate, "-CAkey", caKey, "-CAcreateserial",
            "-out", certificate, "-days", "\(days)", "-extfile", extensions,
        ])
        return (certificate, key)
    }

    /// The RFC 7469 pin of a certificate, computed by openssl (independently of Cordon).
    public func pin(_ certificate: String) throws -> String {
        let script =
            "openssl x509 -in '\(certificate)' -pubkey -noout | openssl pkey -pubin -outform der"
            + " | openssl dgst -sha256 -binary | base64"
        return try ChannelCommand.checked(["sh", "-c", script]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }
}
