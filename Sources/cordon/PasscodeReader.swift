import Foundation

/// Reads passcodes: from the terminal without echo, or one line at a time from stdin (`--passcode-stdin`).
///
/// The bytes are read into a buffer that is zeroed before it is freed; the passcode is never printed.
struct PasscodeReader {
    /// The longest passcode accepted, in bytes.
    static let maxBytes = 1024

    /// Read lines from stdin instead of prompting on the terminal.
    var fromStandardInput: Bool

    /// Fails unless a passcode can be read: call it before connecting, so scripts fail fast.
    func checkAvailable() throws {
        if !fromStandardInput && isatty(STDIN_FILENO) != 1 { throw Self.noTerminal }
    }

    /// Reads one passcode, prompting with `prompt` on the terminal (stdin: no prompt).
    func read(prompt: String) throws -> String {
        if fromStandardInput {
            let descriptor = STDIN_FILENO
            let interactive = isatty(descriptor) == 1
            if interactive { Self.write(prompt, to: STDERR_FILENO) }
            let line =
                interactive
                ? try TerminalEcho.withEchoDisabled(on: descriptor) { try Self.readLine(from: descriptor) }
                : try Self.readLine(from: descriptor)
            if interactive { Self.write("\n", to: STDERR_FILENO) }
            guard let line, !line.isEmpty else {
                let what = prompt.trimmingCharacters(in: CharacterSet(charactersIn: ": ")).lowercased()
                throw CLIError(
                    "standard input holds no \(what) (\(line == nil ? "it ended" : "the line is empty"))",
                    hint: "give one passcode per line on stdin", code: .usage)
            }
            return line
        }
        try checkAvailable()
        let terminal = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        defer { if terminal >= 0 { close(terminal) } }
        let input = terminal >= 0 ? terminal : STDIN_FILENO
        let output = terminal >= 0 ? terminal : STDERR_FILENO
        Self.write(prompt, to: output)
        let line = try TerminalEcho.withEchoDisabled(on: input) { try Self.readLine(from: input) }
        Self.write("\n", to: output)
        guard let line, !line.isEmpty else {
            throw CLIError("no passcode was entered", hint: "type the passcode, then press Enter", code: .usage)
        }
        return line
    }

    /// Reads a passcode twice and checks that both match.
    func readNew(prompt: String, confirmation: String) throws -> String {
        let first = try read(prompt: prompt)
        if fromStandardInput { return first }
        let second = try read(prompt: confirmation)
        guard first == second else {
            throw CLIError("the two passcodes do not match", hint: "run the command again and type the same passcode")
        }
        return first
    }

    /// The error when there is no terminal to ask on.
    static let noTerminal = CLIError(
        "standard input is not a terminal, so the passcode cannot be asked for",
        hint: "add --passcode-stdin and pipe the passcode in, one per line (e.g. `... --passcode-stdin < file`)",
        code: .usage)

    /// Reads bytes up to a newline (not included; a trailing CR is dropped), or `nil` at end of input
    /// before any byte. Reads one byte at a time so that nothing after the line is consumed.
    private static func readLine(from descriptor: Int32) throws -> String? {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: maxBytes, alignment: 1)
        defer {
            if let base = buffer.baseAddress { explicit_bzero(base, buffer.count) }
            buffer.deallocate()
        }
        var count = 0
        var sawNewline = false
        while true {
            var byte: UInt8 = 0
            let result = Foundation.read(descriptor, &byte, 1)
            if result < 0 {
                if errno == EINTR { continue }
                throw CLIError("cannot read the passcode: \(String(cString: strerror(errno)))", hint: "try again")
            }
            if result == 0 { break }
            if byte == 10 {
                sawNewline = true
                break
            }
            guard count < maxBytes else {
                byte = 0
                throw CLIError(
                    "the passcode is longer than \(maxBytes) bytes", hint: "use a shorter passcode", code: .usage)
            }
            buffer[count] = byte
            byte = 0
            count += 1
        }
        if count == 0 && !sawNewline { return nil }
        if count > 0 && buffer[count - 1] == 13 { count -= 1 }
        guard let passcode = String(validating: UnsafeRawBufferPointer(rebasing: buffer[0..<count]), as: UTF8.self)
        else {
            throw CLIError("the passcode is not valid UTF-8", hint: "check the terminal's or the file's encoding")
        }
        return passcode
    }

    private static func write(_ text: String, to descriptor: Int32) {
        _ = Array(text.utf8).withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
    }
}
