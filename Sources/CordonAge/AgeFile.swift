#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Thin helpers that stream an age file between two file descriptors through `AgeEncryptor` /
/// `AgeDecryptor`, holding one read buffer and at most one chunk: a file of any size is encrypted
/// or decrypted in a few hundred KiB. The descriptors stay open; the caller owns them.
public enum AgeFile {
    /// Bytes per read: four chunks, so the encryptor seals three of every four straight from the
    /// read buffer (it keeps the last until it knows whether more follow).
    static let readSize = 256 * 1024

    /// Encrypts everything readable from `input` to `recipients`, writing the age file (armored
    /// when `armor`) to `output`.
    public static func encrypt(
        from input: Int32, to output: Int32, recipients: [any AgeRecipient], armor: Bool = false,
        randomness: AgeRandomness = .system
    ) throws(AgeError) {
        var encryptor = try AgeEncryptor(recipients: recipients, randomness: randomness)
        var armorer = AgeArmorEncoder()
        let write: (UnsafeRawBufferPointer) throws(AgeError) -> Void = { bytes throws(AgeError) in
            if armor {
                try writeAll(output, armorer.update(Array(bytes)))
            } else {
                try writeAll(output, bytes)
            }
        }
        var buffer = [UInt8](repeating: 0, count: readSize)
        while true {
            let count = try readSome(input, into: &buffer)
            if count == 0 { break }
            try withBytes(buffer) { (bytes) throws(AgeError) in
                try encryptor.update(UnsafeRawBufferPointer(rebasing: bytes[..<count]), emit: write)
            }
        }
        try encryptor.finish(emit: write)
        if armor { try writeAll(output, armorer.finish()) }
    }

    /// Decrypts the age file readable from `input` (binary or armored, told apart by its first
    /// bytes) with `identities`, writing the plaintext to `output`. On an error, what was written
    /// is the plaintext of the chunks that authenticated before it, and nothing more.
    public static func decrypt(
        from input: Int32, to output: Int32, identities: [any AgeIdentity]
    ) throws(AgeError) {
        var decryptor = AgeDecryptor(identities: identities)
        var dearmorer: AgeArmorDecoder?
        let write: (UnsafeRawBufferPointer) throws(AgeError) -> Void = { bytes throws(AgeError) in
            try writeAll(output, bytes)
        }
        var buffer = [UInt8](repeating: 0, count: readSize)
        var first = true
        while true {
            let count = try readSome(input, into: &buffer)
            if first, count > 0, AgeArmor.looksArmored(buffer[..<count]) { dearmorer = AgeArmorDecoder() }
            first = false
            if count == 0 { break }
            if var armor = dearmorer {
                let binary = try armor.update(Array(buffer[..<count]))
                dearmorer = armor
                try withBytes(binary) { (bytes) throws(AgeError) in try decryptor.update(bytes, emit: write) }
            } else {
                try withBytes(buffer) { (bytes) throws(AgeError) in
                    try decryptor.update(UnsafeRawBufferPointer(rebasing: bytes[..<count]), emit: write)
                }
            }
        }
        if var armor = dearmorer {
            let binary = try armor.finish()
            try withBytes(binary) { (bytes) throws(AgeError) in try decryptor.update(bytes, emit: write) }
        }
        try decryptor.finish(emit: write)
    }

    /// Reads up to `buffer.count` bytes, retrying on EINTR; 0 at the end of the input.
    public static func readSome(_ descriptor: Int32, into buffer: inout [UInt8]) throws(AgeError) -> Int {
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count >= 0 { return count }
            if errno != EINTR { throw .io(operation: "read", errno: errno) }
        }
    }

    static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) throws(AgeError) {
        try withBytes(bytes) { (buffer) throws(AgeError) in try writeAll(descriptor, buffer) }
    }

    /// Writes all of `bytes`, retrying on EINTR and short writes.
    public static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) throws(AgeError) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let count = write(descriptor, base + offset, bytes.count - offset)
            if count < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "write", errno: errno)
            }
            offset += count
        }
    }
}
