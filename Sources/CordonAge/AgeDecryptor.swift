import Crypto
import Foundation

/// Decrypts an age v1 file incrementally with constant memory: feed the file's bytes with
/// `update`, end with `finish`. It holds the header while it arrives, then at most one sealed
/// chunk plus what the last read added, and emits plaintext only from chunks that
/// authenticated; a full chunk is opened once the next byte shows whether it is the last.
public struct AgeDecryptor: Sendable {
    private enum Phase: Sendable {
        case header, nonce, payload, done
    }

    private let identities: [any AgeIdentity]
    private var phase = Phase.header
    private var pending: [UInt8] = []
    private var cipher: ChunkCipher?
    /// Where each chunk is opened (one chunk of plaintext, reused).
    private var opened: [UInt8] = []
    private var counter: UInt64 = 0
    private var failure: AgeError?
    /// The parsed header, once it has been read and authenticated.
    public private(set) var header: AgeHeader?

    /// The ciphertext bytes held between calls: at most the header while it arrives, then at
    /// most one sealed chunk and one byte (what bounds the decryptor's memory).
    public var bufferedByteCount: Int { pending.count }

    /// A decryptor that tries `identities` in order on the header's stanzas.
    public init(identities: [any AgeIdentity]) {
        self.identities = identities
    }

    /// Consumes `input`, emitting the plaintext of every chunk known to be complete and
    /// authentic. After an error every further call throws it again.
    public mutating func update(
        _ input: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws(AgeError) -> Void
    ) throws(AgeError) {
        if let failure { throw failure }
        do throws(AgeError) {
            try consume(input[...], emit: emit)
        } catch {
            failure = error
            throw error
        }
    }

    /// Consumes `input` and returns the plaintext it completed. On an error the plaintext this
    /// call had released is dropped with it; the `emit` form hands over each chunk as it opens.
    public mutating func update(_ input: [UInt8]) throws(AgeError) -> [UInt8] {
        var output: [UInt8] = []
        try withBytes(input) { (bytes) throws(AgeError) in
            try update(bytes) { output.append(contentsOf: $0) }
        }
        return output
    }

    /// Ends the input: opens the final chunk and checks the file ended where it should.
    public mutating func finish(emit: (UnsafeRawBufferPointer) throws(AgeError) -> Void) throws(AgeError) {
        if let failure { throw failure }
        do throws(AgeError) {
            try finishPayload(emit: emit)
        } catch {
            failure = error
            throw error
        }
    }

    /// Ends the input and returns the final plaintext.
    public mutating func finish() throws(AgeError) -> [UInt8] {
        var output: [UInt8] = []
        try finish { output.append(contentsOf: $0) }
        return output
    }

    private mutating func consume(
        _ input: Slice<UnsafeRawBufferPointer>, emit: (UnsafeRawBufferPointer) throws(AgeError) -> Void
    ) throws(AgeError) {
        var rest = input
        if phase == .header {
            // Copy no more than a header can hold; the bytes after it stay in `input`.
            let take = min(AgeHeaderParser.maximumHeaderBytes + 1 - pending.count, rest.count)
            pending.append(contentsOf: rest.prefix(take))
            // A header ends with a line feed: parse only when one arrived (or the bound is hit).
            guard rest.prefix(take).contains(0x0A) || pending.count > AgeHeaderParser.maximumHeaderBytes else {
                return
            }
            guard let (header, length) = try AgeHeaderParser.parse(pending, atEnd: false) else { return }
            try open(header)
            let after = pending.count - length
            rest = rest.dropFirst(take - after)
            pending = []
            phase = .nonce
        }
        if phase == .nonce {
            let take = min(AgePayload.nonceSize - pending.count, rest.count)
            pending.append(contentsOf: rest.prefix(take))
            rest = rest.dropFirst(take)
            guard pending.count >= AgePayload.nonceSize else { return }
            startPayload()
        }
        guard phase == .payload else { return }
        while true {
            // Nothing pending: whole chunks are opened straight from the input, without a copy.
            if pending.isEmpty {
                while rest.count > AgePayload.sealedChunkSize {
                    let sealed = UnsafeRawBufferPointer(rebasing: rest.prefix(AgePayload.sealedChunkSize))
                    try openChunk(sealed, emit: emit)
                    rest = rest.dropFirst(AgePayload.sealedChunkSize)
                }
                pending.append(contentsOf: rest)
                return
            }
            // Otherwise top the pending chunk up to one byte past a full chunk, at most.
            let take = min(AgePayload.sealedChunkSize + 1 - pending.count, rest.count)
            pending.append(contentsOf: rest.prefix(take))
            rest = rest.dropFirst(take)
            guard pending.count > AgePayload.sealedChunkSize else { return }
            try withBytes(pending) { (bytes) throws(AgeError) in
                try openChunk(UnsafeRawBufferPointer(rebasing: bytes[..<AgePayload.sealedChunkSize]), emit: emit)
            }
            pending.removeFirst(AgePayload.sealedChunkSize)
        }
    }

    /// Unwraps the file key with the first identity that opens a stanza, then checks the MAC.
    private mutating func open(_ header: AgeHeader) throws(AgeError) {
        if header.stanzas.count > 1, header.stanzas.contains(where: { $0.type == AgeScryptRecipient.stanzaType }) {
            throw .scryptNotAlone
        }
        var fileKey: SymmetricKey?
        for identity in identities where fileKey == nil {
            fileKey = try identity.unwrap(stanzas: header.stanzas)
        }
        guard let fileKey else { throw .noIdentityMatched(stanzaTypes: header.stanzas.map(\.type)) }
        guard header.verifyMAC(fileKey: fileKey) else { throw .headerMACMismatch }
        self.header = header
        // The nonce follows; the file key is needed only to derive the payload key from it.
        pendingFileKey = fileKey
    }

    private var pendingFileKey: SymmetricKey?

    private mutating func startPayload() {
        let nonce = Array(pending.prefix(AgePayload.nonceSize))
        pending.removeFirst(AgePayload.nonceSize)
        guard let fileKey = pendingFileKey else { preconditionFailure("the payload starts after the header") }
        cipher = AgePayload.cipher(fileKey: fileKey, nonce: nonce)
        pendingFileKey = nil
        phase = .payload
    }

    private mutating func openChunk(
        _ sealed: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws(AgeError) -> Void
    ) throws(AgeError) {
        guard let cipher else { preconditionFailure("chunks are opened after the payload nonce") }
        // A full chunk with more bytes after it must open as a non-final chunk. One that opens
        // only as a final chunk is authentic (its plaintext is released, as age does) but the
        // bytes after it are trailing data.
        if try AgePayload.open(sealed, cipher: cipher, counter: counter, final: false, scratch: &opened, emit: emit) {
            counter += 1
            return
        }
        if try AgePayload.open(sealed, cipher: cipher, counter: counter, final: true, scratch: &opened, emit: emit) {
            phase = .done
            throw .trailingData
        }
        throw .chunkAuthenticationFailed(chunk: counter)
    }

    private mutating func finishPayload(emit: (UnsafeRawBufferPointer) throws(AgeError) -> Void) throws(AgeError) {
        if phase == .header {
            guard let (header, length) = try AgeHeaderParser.parse(pending, atEnd: true) else {
                throw .truncated("header")
            }
            try open(header)
            pending.removeFirst(length)
            phase = .nonce
        }
        if phase == .nonce {
            guard pending.count >= AgePayload.nonceSize else { throw .truncated("nonce") }
            startPayload()
        }
        guard phase == .payload else { return }
        if pending.isEmpty { throw .truncated("payload") }
        guard let cipher else { preconditionFailure("chunks are opened after the payload nonce") }
        let counter = counter
        var lastCount = 0
        let authentic = try withBytes(pending) { (bytes) throws(AgeError) in
            try AgePayload.open(bytes, cipher: cipher, counter: counter, final: true, scratch: &opened) {
                plaintext throws(AgeError) in
                lastCount = plaintext.count
                try emit(plaintext)
            }
        }
        guard authentic else {
            if pending.count < AgePayload.tagSize { throw .truncated("payload") }
            // A full chunk that is not final: released if authentic, then the end is missing.
            if pending.count == AgePayload.sealedChunkSize,
                try withBytes(
                    pending,
                    { (bytes) throws(AgeError) in
                        try AgePayload.open(
                            bytes, cipher: cipher, counter: counter, final: false, scratch: &opened, emit: emit)
                    })
            {
                throw .truncated("payload")
            }
            throw .chunkAuthenticationFailed(chunk: counter)
        }
        if lastCount == 0, counter > 0 { throw .emptyLastChunk(chunk: counter) }
        pending = []
        phase = .done
    }
}
