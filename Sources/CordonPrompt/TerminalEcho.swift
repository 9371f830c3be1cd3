import CordonProtocol
import Foundation

/// The terminal to restore if a signal interrupts a passcode prompt (read by the signal handler).
nonisolated(unsafe) private var interruptedDescriptor: Int32 = -1
/// The settings to restore on `interruptedDescriptor`.
nonisolated(unsafe) private var interruptedSettings = termios()

/// Restores the terminal's echo, then dies of `signal` as if no handler had been installed.
private func restoreTerminalAndReraise(_ signal: Int32) {
    if interruptedDescriptor >= 0 {
        _ = tcsetattr(interruptedDescriptor, TCSANOW, &interruptedSettings)
        var newline: UInt8 = 10
        _ = write(interruptedDescriptor, &newline, 1)
    }
    _ = Foundation.signal(signal, SIG_DFL)
    _ = raise(signal)
}

/// Turns a terminal's echo off for the duration of a closure and always turns it back on.
enum TerminalEcho {
    /// The signals that would otherwise leave the terminal silent.
    private static let fatalSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    /// Runs `body` with echo off on the terminal `descriptor`; the settings are restored when `body`
    /// returns or throws, and when one of the usual fatal signals arrives meanwhile.
    static func withEchoDisabled<T>(on descriptor: Int32, _ body: () throws -> T) throws -> T {
        var original = termios()
        guard tcgetattr(descriptor, &original) == 0 else {
            throw ErrorText(
                "cannot read the terminal settings: \(String(cString: strerror(errno)))",
                hint: "run the command on a terminal, or pipe the passcode with --passcode-stdin")
        }
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        interruptedSettings = original
        interruptedDescriptor = descriptor
        // A signal the parent made us ignore stays ignored.
        let previousHandlers = fatalSignals.map { number in
            let previous = signal(number, restoreTerminalAndReraise)
            if unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) {
                _ = signal(number, SIG_IGN)
            }
            return previous
        }
        defer {
            _ = tcsetattr(descriptor, TCSANOW, &original)
            for (signalNumber, handler) in zip(fatalSignals, previousHandlers) { _ = signal(signalNumber, handler) }
            interruptedDescriptor = -1
        }
        guard tcsetattr(descriptor, TCSAFLUSH, &silent) == 0 else {
            throw ErrorText(
                "cannot turn off the terminal's echo: \(String(cString: strerror(errno)))",
                hint: "run the command on a terminal, or pipe the passcode with --passcode-stdin")
        }
        return try body()
    }
}
