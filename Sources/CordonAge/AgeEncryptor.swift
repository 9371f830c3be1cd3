import Crypto

/// Encrypts a stream to an age v1 file with constant memory: feed plaintext with `update`, end
/// with `finish`; the header, nonce and sealed 64 KiB chunks are handed to `emit` as they are
/// ready. It holds at most one chunk of plaintext (a full chunk is sealed only once more input
/// shows it is not the last).
public struct AgeEncryptor: Sendable {
    private let cipher: ChunkCipher
    private var prefix: [UInt8]
    private var buffer: [UInt8] = []
    private var counter: UInt64 = 0
    /// Where each chunk is sealed (one sealed chunk, reused).
    private var sealed: [UInt8] = []
    private var finished = false

    /// The plaintext bytes held between calls: at most one chunk (64 KiB).
    public var bufferedByteCount: Int { buffer.count }

    /// An encryptor to `recipients` (at least one; an scrypt recipient must be the only one).
    public init(recipients: [any AgeRecipient], randomness: AgeRandomness = .system) throws(AgeError) {
        guard !recipients.isEmpty else { throw .invalidArgument("no recipients") }
        if recipients.count > 1, recipients.contains(where: { $0 is AgeScryptRecipient }) {
            throw .scryptNotAlone
        }
        let fileKey = SymmetricKey(data: randomness.bytes(AgePayload.fileKeySize))
        var stanzas: [AgeStanza] = []
        for recipient in recipients { stanzas += try recipient.wrap(fileKey: fileKey, randomness: randomness) }
        let nonce = randomness.bytes(AgePayload.nonceSize)
        prefix = AgeHeader.encode(stanzas: stanzas, fileKey: fileKey) + nonce
        cipher = AgePayload.cipher(fileKey: fileKey, nonce: nonce)
        buffer.reserveCapacity(AgePayload.chunkSize)
    }

    /// Encrypts `input`, emitting whatever is complete (the header first).
    public mutating func update(
        _ input: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws(AgeError) -> Void
    ) throws(AgeError) {
        precondition(!finished, "AgeEncryptor.update after finish")
        try emitPrefix(emit)
        var rest = input[...]
        while !rest.isEmpty {
            if buffer.count == AgePayload.chunkSize {
                try sealBuffer(final: false, emit: emit)
            }
            // A whole chunk straight from the input when more input follows it: no copy.
            if buffer.isEmpty, rest.count > AgePayload.chunkSize {
                let chunk = UnsafeRawBufferPointer(rebasing: rest.prefix(AgePayload.chunkSize))
                try AgePayload.seal(chunk, cipher: cipher, counter: counter, final: false, scratch: &sealed, emit: emit)
                counter += 1
                rest = rest.dropFirst(AgePayload.chunkSize)
                continue
            }
            let take = min(AgePayload.chunkSize - buffer.count, rest.count)
            buffer.append(contentsOf: rest.prefix(take))
            rest = rest.dropFirst(take)
        }
    }

    /// Encrypts `input` and returns what is complete (for callers that hold bytes, not buffers).
    public mutating func update(_ input: [UInt8]) throws(AgeError) -> [UInt8] {
        var output: [UInt8] = []
        try withBytes(input) { (bytes) throws(AgeError) in
            try update(bytes) { output.append(contentsOf: $0) }
        }
        return output
    }

    /// Seals the last chunk (empty only when the whole payload is) and emits it.
    public mutating func finish(emit: (UnsafeRawBufferPointer) throws(AgeError) -> Void) throws(AgeError) {
        precondition(!finished, "AgeEncryptor.finish twice")
        try emitPrefix(emit)
        try sealBuffer(final: true, emit: emit)
        finished = true
    }

    /// Finishes and returns the last bytes.
    public mutating func finish() throws(AgeError) -> [UInt8] {
        var output: [UInt8] = []
        try finish { output.append(contentsOf: $0) }
        return output
    }

    private mutating func emitPrefix(_ emit: (UnsafeRawBufferPointer) throws(AgeError) -> Void) throws(AgeError) {
        guard !prefix.isEmpty else { return }
        let header = prefix
        prefix = []
        try withBytes(header) { (bytes) throws(AgeError) in try emit(bytes) }
    }

    private mutating func sealBuffer(
        final: Bool, emit: (UnsafeRawBufferPointer) throws(AgeError) -> Void
    ) throws(AgeError) {
        let cipher = cipher
        let counter = counter
        try withBytes(buffer) { (bytes) throws(AgeError) in
            try AgePayload.seal(bytes, cipher: cipher, counter: counter, final: final, scratch: &sealed, emit: emit)
        }
        self.counter += 1
        buffer.removeAll(keepingCapacity: true)
    }
}
