import CordonProtocol
import Foundation
import Testing

@testable import CordonServer

/// The agent checks `network.clientCertificate` before handing the paths to an app (issue #32):
/// each problem is `InvalidClientCertificate` naming the policy key, the path and what is wrong.
@Suite struct ClientCertificateCheckTests {
    let directory: String

    init() throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent(
                "cordon-client-cert-\(UUID().uuidString)"
            ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// A self-signed certificate and its key, made by openssl; returns their paths.
    func pair(_ name: String) throws -> (certificate: String, key: String) {
        let certificate = directory + "/\(name).pem"
        let key = directory + "/\(name).key"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
            key, "-out", certificate, "-subj", "/CN=\(name)", "-days", "30",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return (certificate, key)
    }

    func problem(_ certificate: String, _ key: String) -> CordonError? {
        do throws(CordonError) {
            try ClientCertificateCheck.check(NetworkPolicy.ClientCertificate(certificate: certificate, key: key))
            return nil
        } catch { return error }
    }

    @Test func aMatchingPairPasses() throws {
        let good = try pair("good")
        #expect(problem(good.certificate, good.key) == nil)
    }

    @Test func eachProblemIsNamed() throws {
        let good = try pair("good")
        let other = try pair("other")
        let certificateKey = ClientCertificateCheck.certificateParameter
        let keyKey = ClientCertificateCheck.keyParameter
        let missing = directory + "/missing.pem"
        #expect(
            problem(missing, good.key)
                == .invalidClientCertificate(parameter: certificateKey, path: missing, reason: "it does not exist"))
        #expect(
            problem(good.certificate, directory)
                == .invalidClientCertificate(parameter: keyKey, path: directory, reason: "it is not a regular file"))
        let text = directory + "/text.pem"
        try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: text))
        #expect(
            problem(text, good.key)
                == .invalidClientCertificate(
                    parameter: certificateKey, path: text, reason: "it is not a PEM certificate chain"))
        #expect(
            problem(good.certificate, good.certificate)
                == .invalidClientCertificate(
                    parameter: keyKey, path: good.certificate, reason: "it is not an unencrypted PEM private key"))
        #expect(
            problem(good.certificate, other.key)
                == .invalidClientCertificate(
                    parameter: keyKey, path: other.key,
                    reason: "it is not the private key of the certificate in \(good.certificate)"))
        if getuid() != 0 {
            chmod(good.key, 0)
            guard case .invalidClientCertificate(keyKey, good.key, let reason) = problem(good.certificate, good.key)
            else {
                Issue.record("an unreadable key passes")
                return
            }
            #expect(reason.hasPrefix("it cannot be read"))
        }
        // The user's text names the key, the path and the problem, and ends with a hint.
        let text2 = CordonError.invalidClientCertificate(
            parameter: keyKey, path: other.key, reason: "it does not exist"
        )
        .text
        #expect(text2.message.contains(keyKey) && text2.message.contains(other.key))
    }
}
