import CordonProtocol
import Foundation

/// Reading a passcode from standard input or, without echo, from the terminal.
extension PasscodeReader {
    /// Reads one line of standard input (`--passcode-stdin`); on a terminal, `prompt` is shown and echo is off.
    static func readStandardInput(prompt: String) throws -> String {
        let descriptor = STDIN_FILENO
        let interactive = isatty(descriptor) == 1
        if interactive { write(prompt, to: STDERR_FILENO) }
        let line =
            interactive
            ? try TerminalEcho.withEchoDisabled(on: descriptor) { try readLine(from: descriptor) }
            : try readLine(from: descriptor)
        if interactive { write("\n", to: STDERR_FILENO) }
        guard let line, !line.isEmpty else {
            let what = prompt.trimmingCharacters(in: CharacterSet(charactersIn: ": ")).lowercased()
            throw ErrorText(
                "standard input holds no \(what) (\(line == nil ? "it ended" : "the line is empty"))",
                hint: "give one passcode per line on stdin", exit: .usage)
        }
        return line
    }

    /// Asks on the terminal (`/dev/tty`, else stdin and stderr) with `prompt`, without echo.
    static func readTerminal(prompt: String) throws -> String {
        let terminal = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        defer { if terminal >= 0 { close(terminal) } }
        let input = terminal >= 0 ? terminal : STDIN_FILENO
        let output = terminal >= 0 ? terminal : STDERR_FILENO
        write(prompt, to: output)
        let line = try TerminalEcho.withEchoDisabled(on: input) { try readLine(from: input) }
        write("\n", to: output)
        guard let line, !line.isEmpty else {
            throw ErrorText("no passcode was entered", hint: "type the passcode, then press Enter", exit: .usage)
        }
        return line
    }

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
                throw ErrorText("cannot read the passcode: \(String(cString: strerror(errno)))", hint: "try again")
            }
            if result == 0 { break }
            if byte == 10 {
                sawNewline = true
                break
            }
            guard count < maxBytes else {
                byte = 0
                throw ErrorText(
                    "the passcode is longer than \(maxBytes) bytes", hint: "use a shorter passcode", exit: .usage)
            }
            buffer[count] = byte
            byte = 0
            count += 1
        }
        if count == 0 && !sawNewline { return nil }
        if count > 0 && buffer[count - 1] == 13 { count -= 1 }
        guard let passcode = String(validating: UnsafeRawBufferPointer(rebasing: buffer[0..<count]), as: UTF8.self)
        else {
            throw ErrorText("the passcode is not valid UTF-8", hint: "check the terminal's or the file's encoding")
        }
        return passcode
    }

    private static func write(_ text: String, to descriptor: Int32) {
        _ = Array(text.utf8).withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
    }
}
