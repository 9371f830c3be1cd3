import CordonAge
import CordonProtocol
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension SecureFile {
    /// Bytes read per step (decryption checks the key before each read).
    static let readSize = 64 * 1024
    /// Bytes read per step when encrypting: four chunks, so the encryptor seals three of every
    /// four straight from the read buffer; the key is checked before each chunk is written.
    static let encryptReadSize = 256 * 1024

    /// A revocation between two chunks stops the stream.
    struct Revoked: Error {}

    /// Encrypts what `source` fills in (returning how much; 0 at the end) to `recipient` into
    /// `output`, checking `isCurrent` before every read and before every chunk is written.
    static func encrypt(
        from source: (inout [UInt8]) throws -> Int, to output: Int32, recipient: AgeX25519Recipient,
        isCurrent: () -> Bool
    ) throws {
        try withoutActuallyEscaping(isCurrent) { isCurrent in
            var encryptor = try AgeEncryptor(recipients: [recipient])
            var revoked = false
            let emit: (UnsafeRawBufferPointer) throws(AgeError) -> Void = { bytes throws(AgeError) in
                guard isCurrent() else {
                    revoked = true
                    throw .io(operation: "write", errno: ECANCELED)
                }
                do { try writeAll(output, bytes) } catch { throw .io(operation: "write", errno: errno) }
            }
            var buffer = [UInt8](repeating: 0, count: encryptReadSize)
            do {
                while true {
                    guard isCurrent() else { throw Revoked() }
                    let count = try source(&buffer)
                    if count == 0 { break }
                    try buffer.withUnsafeBytes { bytes in
                        try encryptor.update(UnsafeRawBufferPointer(rebasing: bytes[..<count]), emit: emit)
                    }
                }
                guard isCurrent() else { throw Revoked() }
                try encryptor.finish(emit: emit)
            } catch {
                if revoked { throw Revoked() }
                throw error
            }
        }
    }

    /// Decrypts `input` with `identity`, handing each authenticated chunk to `output`, checking
    /// `isCurrent` before every read.
    static func decrypt(
        from input: Int32, identity: AgeX25519Identity, isCurrent: () -> Bool,
        output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        try withoutActuallyEscaping(output) { output in
            var decryptor = AgeDecryptor(identities: [identity])
            var failure: (any Error)?
            let emit: (UnsafeRawBufferPointer) throws(AgeError) -> Void = { bytes throws(AgeError) in
                do { try output(bytes) } catch {
                    failure = error
                    throw .io(operation: "write", errno: EIO)
                }
            }
            var buffer = [UInt8](repeating: 0, count: readSize)
            do {
                while true {
                    guard isCurrent() else { throw Revoked() }
                    let count = try readSome(input, into: &buffer)
                    if count == 0 { break }
                    try buffer.withUnsafeBytes { bytes in
                        try decryptor.update(UnsafeRawBufferPointer(rebasing: bytes[..<count]), emit: emit)
                    }
                }
                try decryptor.finish(emit: emit)
            } catch {
                throw failure ?? error
            }
        }
    }

    /// Flushes the directory holding `path` (after a rename into it).
    static func syncDirectory(of path: String) throws {
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
        let directory = slash.map { $0 == path.utf8.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    static func readSome(_ descriptor: Int32, into buffer: inout [UInt8]) throws -> Int {
        try AgeFile.readSome(descriptor, into: &buffer)
    }

    static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) throws {
        try AgeFile.writeAll(descriptor, bytes)
    }
}
