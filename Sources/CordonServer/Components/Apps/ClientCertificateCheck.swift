import CordonProtocol
import Foundation
import NIOSSL

/// The agent's check of `network.clientCertificate` before `GetNetworkPolicy` hands the paths to
/// an app (docs/ARCHITECTURE.md, "Pinned channel"): each file exists, is a regular file the agent
/// (the same user as the app) can read, the certificate file is a PEM certificate chain, the key
/// file an unencrypted PEM private key, and the key is the leaf certificate's. A problem is
/// `InvalidClientCertificate`, naming the policy key, the path and what is wrong, never the
/// files' contents.
enum ClientCertificateCheck {
    static let certificateParameter = "network.clientCertificate.certificate"
    static let keyParameter = "network.clientCertificate.key"

    /// Throws `invalidClientCertificate` for the first problem of `client`.
    static func check(_ client: NetworkPolicy.ClientCertificate) throws(CordonError) {
        let certificateBytes = try read(client.certificate, parameter: certificateParameter)
        let keyBytes = try read(client.key, parameter: keyParameter)
        let chain: [NIOSSLCertificate]
        do { chain = try NIOSSLCertificate.fromPEMBytes(certificateBytes) } catch { chain = [] }
        guard !chain.isEmpty else {
            throw .invalidClientCertificate(
                parameter: certificateParameter, path: client.certificate, reason: "it is not a PEM certificate chain")
        }
        let key: NIOSSLPrivateKey
        do { key = try NIOSSLPrivateKey(bytes: keyBytes, format: .pem) } catch {
            throw .invalidClientCertificate(
                parameter: keyParameter, path: client.key, reason: "it is not an unencrypted PEM private key")
        }
        // OpenSSL refuses a key that is not the leaf certificate's when a context takes both.
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateChain = chain.map { .certificate($0) }
        tls.privateKey = .privateKey(key)
        do { _ = try NIOSSLContext(configuration: tls) } catch {
            throw .invalidClientCertificate(
                parameter: keyParameter, path: client.key,
                reason: "it is not the private key of the certificate in \(client.certificate)")
        }
    }

    /// The bytes of `path`, or why they cannot be read.
    private static func read(_ path: String, parameter: String) throws(CordonError) -> [UInt8] {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let reason =
                errno == ENOENT ? "it does not exist" : "it cannot be reached: \(String(cString: strerror(errno)))"
            throw .invalidClientCertificate(parameter: parameter, path: path, reason: reason)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .invalidClientCertificate(parameter: parameter, path: path, reason: "it is not a regular file")
        }
        // Certificates and keys are small; anything larger is not one.
        guard info.st_size <= 1 << 20 else {
            throw .invalidClientCertificate(parameter: parameter, path: path, reason: "it is over 1 MiB")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .invalidClientCertificate(
                parameter: parameter, path: path, reason: "it cannot be read: \(String(cString: strerror(errno)))")
        }
        defer { try? handle.close() }
        do { return Array(try handle.readToEnd() ?? Data()) } catch {
            throw .invalidClientCertificate(parameter: parameter, path: path, reason: "it cannot be read: \(error)")
        }
    }
}
