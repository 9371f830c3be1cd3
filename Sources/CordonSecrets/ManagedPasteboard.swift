import CordonProtocol
import Crypto
import Foundation

/// The managed pasteboard's one clipping, kept only in the agent's memory and sealed
/// (AES-256-GCM) under a per-session key in locked memory.
///
/// The plaintext exists only while `copy` seals it and while `paste` hands it out; clearing
/// zeroes the sealed bytes, and `rotateKey()` (on every revocation) zeroes the session key too,
/// so nothing copied before a revocation can be opened after it.
///
/// The sealed bytes live in `SecureBytes`, an object: zeroing reaches the one buffer that holds
/// them however many copies of this value exist (zeroing a `Data` held in a value would zero a
/// copy-on-write copy and leave the original untouched).
public struct ManagedPasteboard: Sendable {
    /// The largest clipping accepted, in bytes of UTF-8 (a varlink message is at most 64 KiB).
    public static let maxBytes = 48 * 1024

    /// Who copied the clipping: the app id ("" for an unregistered client) and whether it is managed.
    public struct Source: Sendable, Equatable {
        public var appId: String
        public var managed: Bool

        public init(appId: String, managed: Bool) {
            self.appId = appId
            self.managed = managed
        }
    }

    /// A clipping as pasted.
    public struct Clipping: Sendable, Equatable {
        public var content: String
        public var mimeType: String
        public var source: Source
    }

    private struct Sealed: Sendable {
        /// The AES-GCM combined box (nonce, ciphertext, tag).
        let box: SecureBytes
        var mimeType: String
        var source: Source
        /// The content's length in characters, for the policy's limit before opening it.
        var characters: Int
    }

    private var key: SecureBytes
    private var sealed: Sealed?

    /// An empty pasteboard with a fresh session key.
    public init() {
        key = Self.makeKey()
    }

    /// Whether something is on the pasteboard.
    public var isEmpty: Bool { sealed == nil }

    /// The length in characters of what is on the pasteboard, and who copied it.
    public var summary: (characters: Int, source: Source)? {
        sealed.map { ($0.characters, $0.source) }
    }

    /// Seals `content` (cut to `truncateTo` characters when given) as the pasteboard's clipping.
    /// Returns the number of characters kept when it was cut.
    public mutating func copy(_ content: String, mimeType: String, source: Source, truncateTo: Int?) throws(CordonError)
        -> Int?
    {
        guard content.utf8.count <= Self.maxBytes else { throw .contentTooLarge(limit: Self.maxBytes) }
        var kept = content
        var truncated: Int?
        if let limit = truncateTo, content.count > limit {
            kept = String(content.prefix(limit))
            truncated = limit
        }
        var plain = Data(kept.utf8)
        defer { plain.resetBytes(in: 0..<plain.count) }
        do {
            let box = try key.withUnsafeBytes { bytes in
                try AES.GCM.seal(plain, using: SymmetricKey(data: bytes))
            }
            guard let combined = box.combined else { throw CordonError.internalError(reason: "sealing failed") }
            clear()
            sealed = Sealed(
                box: SecureBytes(copying: combined), mimeType: mimeType, source: source, characters: kept.count)
        } catch {
            throw .internalError(reason: "the pasteboard could not seal the content")
        }
        return truncated
    }

    /// Opens the clipping, cut to `truncateTo` characters when given; nil when empty.
    public func paste(truncateTo: Int?) throws(CordonError) -> Clipping? {
        guard let sealed else { return nil }
        do {
            let box = try sealed.box.withUnsafeBytes { try AES.GCM.SealedBox(combined: $0) }
            var plain = try key.withUnsafeBytes { bytes in try AES.GCM.open(box, using: SymmetricKey(data: bytes)) }
            defer { plain.resetBytes(in: 0..<plain.count) }
            var content = String(decoding: plain, as: UTF8.self)
            if let limit = truncateTo, content.count > limit { content = String(content.prefix(limit)) }
            return Clipping(content: content, mimeType: sealed.mimeType, source: sealed.source)
        } catch {
            throw .internalError(reason: "the pasteboard could not open the content")
        }
    }

    /// Empties the pasteboard, zeroing the sealed bytes where they are stored.
    public mutating func clear() {
        sealed?.box.zero()
        sealed = nil
    }

    /// The storage of the sealed bytes, for tests that check it is zeroed.
    var sealedStorage: SecureBytes? { sealed?.box }

    /// Empties the pasteboard and replaces the session key, zeroing the old one.
    public mutating func rotateKey() {
        clear()
        key.zero()
        key = Self.makeKey()
    }

    private static func makeKey() -> SecureBytes {
        SecureBytes(count: 32) { buffer in
            var generator = SystemRandomNumberGenerator()
            for index in buffer.indices { buffer[index] = generator.next() }
        }
    }
}
