import CordonProtocol
import Foundation

/// What `cordon token import` sends, read and checked where it is read: at most
/// `TokenImportParameters.maximumDataBytes` (16 KiB) of UTF-8 text without control characters
/// (tab, CR and LF aside), so the import always fits one message to cordond (docs/CLI.md,
/// "cordon token"). A file is never read past the limit.
enum TokenImportInput {
    /// The limit, in bytes.
    static let limit = TokenImportParameters.maximumDataBytes

    /// The text of the file at `path`, refused when larger than the limit (its size from `fstat`,
    /// or, for a pipe, once one byte past it is read).
    static func read(file path: String) throws(CLIError) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw PolicyFiles.readError(path) }
        defer { close(descriptor) }
        var info = stat()
        if fstat(descriptor, &info) == 0 {
            if info.st_mode & S_IFMT == S_IFDIR {
                throw CLIError("cannot read \(path): it is a directory", hint: "name the SDTID file")
            }
            if info.st_mode & S_IFMT == S_IFREG, Int(info.st_size) > limit {
                throw tooLarge("the file \(path)", size: "\(info.st_size) bytes")
            }
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= limit {
            let count = chunk.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw PolicyFiles.readError(path)
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        if bytes.count > limit { throw tooLarge("the file \(path)", size: "more than \(limit) bytes") }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CLIError(
                "cannot read \(path) as text: it is not UTF-8", hint: "check that \(path) is the SDTID file")
        }
        try check(text, name: "the file \(path)")
        return text
    }

    /// Refuses `text` (`name` says where it came from) when over the limit or holding a control
    /// character.
    static func check(_ text: String, name: String) throws(CLIError) {
        let size = text.utf8.count
        if size > limit { throw tooLarge(name, size: "\(size) bytes") }
        if let offset = text.utf8.firstIndex(where: { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) {
            let position = text.utf8.distance(from: text.utf8.startIndex, to: offset)
            throw CLIError(
                "\(name) holds a control character at byte \(position); a token import is text",
                hint: "check that it is a CTF string, an SDTID file or an otpauth URI", code: .usage)
        }
    }

    private static func tooLarge(_ name: String, size: String) -> CLIError {
        CLIError(
            "\(name) is \(size); a token import is at most \(limit) bytes (16 KiB)",
            hint: "an SDTID file or a Google Authenticator QR code is a few KiB: check that this is the token, "
                + "and import a large export one otpauth-migration URI (one QR code) at a time",
            code: .usage)
    }
}
