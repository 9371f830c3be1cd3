import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Why a request to a provider got no answer, in one clause that names the cause as the system
/// reported it (docs/ARCHITECTURE.md, "Identity"; issue #32): a refused connection, a timeout
/// with its limit, a TLS failure with its reason, a name that does not resolve. The host and port
/// are named; never a path, query or field value.
enum IdentityTransportFailure {
    /// The clause for `error` from a request to `url`, whose limits were `connect` and `answer`.
    static func describe(_ error: any Error, url: String, connect: TimeAmount, answer: TimeAmount) -> String {
        let server = Self.server(of: url)
        if let error = error as? NIOConnectionError {
            if error.connectionErrors.isEmpty, error.dnsAError != nil || error.dnsAAAAError != nil {
                return "\(error.host) could not be resolved"
            }
            if let first = error.connectionErrors.first {
                return describe(first.error, url: url, connect: connect, answer: answer)
            }
            return "the connection to \(server) failed"
        }
        if let error = error as? IOError { return describe(errno: error.errnoCode, server: server) }
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            return "TLS with \(server) failed: its certificate is not for \(host(of: url))"
        }
        if let error = error as? NIOSSLError {
            return "TLS with \(server) failed: \(tlsReason(String(describing: error)))"
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout: return "connecting to \(server) timed out after \(seconds(connect))"
            case .readTimeout, .deadlineExceeded: return "\(server) did not answer within \(seconds(answer))"
            case .remoteConnectionClosed: return "\(server) closed the connection without an answer"
            case .tlsHandshakeTimeout: return "TLS with \(server) failed: the handshake timed out"
            default: return "the request to \(server) failed: \(String(describing: error).prefix(200))"
            }
        }
        if let error = error as? ChannelError, case .connectTimeout = error {
            return "connecting to \(server) timed out after \(seconds(connect))"
        }
        return "the request to \(server) failed: \(String(describing: error).prefix(200))"
    }

    /// A connection's system error: refused, reset, timed out, or the system's words and number.
    static func describe(errno code: Int32, server: String) -> String {
        switch code {
        case ECONNREFUSED: return "the connection to \(server) was refused"
        case ECONNRESET: return "\(server) reset the connection"
        case ETIMEDOUT: return "connecting to \(server) timed out"
        default: return "the connection to \(server) failed: \(String(cString: strerror(code))) (errno \(code))"
        }
    }

    /// BoringSSL's reason code in `text` (`…:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED at …`), in words.
    static func tlsReason(_ text: String) -> String {
        // `error:100000f7:SSL routines:OPENSSL_internal:WRONG_VERSION_NUMBER at …`: the code after
        // the library's part.
        let code = text.components(separatedBy: "OPENSSL_internal:").dropFirst().first.map { rest in
            String(rest.prefix { $0.isASCII && ($0.isUppercase || $0.isNumber || $0 == "_") })
        }.flatMap { $0.isEmpty ? nil : $0 }
        switch code {
        case "CERTIFICATE_VERIFY_FAILED"?:
            return "its certificate is not trusted (CERTIFICATE_VERIFY_FAILED: self-signed, unknown issuer or expired)"
        case "WRONG_VERSION_NUMBER"?: return "the server does not speak TLS (WRONG_VERSION_NUMBER)"
        case let code?: return code
        case nil: return String(text.prefix(200))
        }
    }

    /// `host:port` of `url` (the scheme's port when none is given).
    static func server(of url: String) -> String {
        guard let parsed = URL(string: url), let host = parsed.host else { return "the provider" }
        let port = parsed.port ?? (parsed.scheme == "http" ? 80 : 443)
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    static func host(of url: String) -> String { URL(string: url)?.host ?? "the provider" }

    /// `15 s`, `0.2 s`.
    static func seconds(_ amount: TimeAmount) -> String {
        let value = Double(amount.nanoseconds) / 1e9
        return value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}
