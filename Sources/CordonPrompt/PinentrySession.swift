import CordonKit
import CordonPinentry
import CordonProtocol
import Foundation

/// One running pinentry program and the Assuan dialogue with it.
///
/// Starting it reads the greeting and sends the terminal options and the title; each `getPin` is
/// one SETDESC / SETPROMPT / SETERROR / GETPIN exchange; `close()` says BYE and reaps the child.
/// The whole dialogue is bounded in time (`$CORDON_PINENTRY_TIMEOUT` seconds, default 300) and in
/// size (64 KiB of responses). Passcode bytes are kept in a buffer that is zeroed after use.
final class PinentrySession {
    /// The most bytes pinentry may send in one session.
    static let maxResponseBytes = 64 * 1024
    /// The time limit of a session unless `CORDON_PINENTRY_TIMEOUT` sets another (seconds).
    static let defaultTimeoutSeconds = 300.0

    let program: PinentryProgram
    let deadline: ContinuousClock.Instant
    let timeoutSeconds: Double
    var pid: pid_t = 0
    var input: Int32 = -1
    var output: Int32 = -1
    var previousPipeHandler: sighandler_t?
    /// Bytes received and not yet consumed as lines.
    let pending = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
    var pendingCount = 0
    var totalReceived = 0
    /// The decoded passcode of the current GETPIN.
    let secret = UnsafeMutableRawBufferPointer.allocate(byteCount: PasscodeReader.maxBytes, alignment: 1)
    var secretCount = 0
    var secretOverflow = false

    /// Starts `program` and opens the dialogue.
    init(program: PinentryProgram, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        self.program = program
        let configured = environment["CORDON_PINENTRY_TIMEOUT"].flatMap(Double.init)
        timeoutSeconds = configured.map { max($0, 0.001) } ?? Self.defaultTimeoutSeconds
        deadline = .now + .milliseconds(Int64(timeoutSeconds * 1000))
        pending.initializeMemory(as: UInt8.self, repeating: 0)
        secret.initializeMemory(as: UInt8.self, repeating: 0)
        do {
            try spawn()
            try expectOK(after: "the greeting")
            if let ttyName = program.ttyName { try run("OPTION", "ttyname=\(ttyName)") }
            if let ttyType = program.ttyType { try run("OPTION", "ttytype=\(ttyType)") }
            try run("SETTITLE", "Cordon")
        } catch {
            close(politely: false)
            throw error
        }
    }

    deinit {
        close(politely: false)
        if let base = pending.baseAddress { explicit_bzero(base, pending.count) }
        if let base = secret.baseAddress { explicit_bzero(base, secret.count) }
        pending.deallocate()
        secret.deallocate()
    }

    /// Asks for a passcode: `description` explains what for, `error` (on a retry) says what went wrong.
    func getPin(description: String, error: String? = nil) throws -> String {
        try run("SETDESC", description)
        try run("SETPROMPT", "Passcode:")
        if let error { try run("SETERROR", error) }
        clearSecret()
        defer { clearSecret() }
        try send(Assuan.command("GETPIN"))
        try expectOK(after: "GETPIN")
        guard !secretOverflow else {
            throw ErrorText(
                "the passcode is longer than \(PasscodeReader.maxBytes) bytes", hint: "use a shorter passcode",
                exit: .usage)
        }
        guard secretCount > 0 else {
            throw ErrorText("no passcode was entered", hint: "type the passcode, then press Enter", exit: .usage)
        }
        guard
            let passcode = String(
                validating: UnsafeRawBufferPointer(rebasing: secret[0..<secretCount]), as: UTF8.self)
        else {
            throw ErrorText("the passcode is not valid UTF-8", hint: "check the keyboard layout and try again")
        }
        return passcode
    }

    /// Sends `command` with `argument` and waits for its `OK`.
    private func run(_ command: String, _ argument: String) throws {
        try send(Assuan.command(command, argument))
        try expectOK(after: command)
    }

    /// Reads responses until `OK` (collecting `D` data into the secret buffer), answering
    /// `INQUIRE` with `CAN`; `ERR` becomes a ErrorText (cancellation: exit code `cancelled`).
    private func expectOK(after what: String) throws {
        while true {
            let length = try nextLine()
            let line = UnsafeRawBufferPointer(rebasing: pending[0..<length])
            let response: Assuan.Response
            do {
                response = try Assuan.parse(line)
                if response == .data { try Assuan.decodeData(line: line) { appendSecret($0) } }
            } catch {
                consumeLine(length)
                throw Self.failure("pinentry answered \(what) with a malformed line: \(error)")
            }
            consumeLine(length)
            switch response {
            case .ok: return
            case .error(let code, _) where Assuan.isCancellation(code):
                throw ErrorText(
                    "the passcode prompt was cancelled", hint: "run the command again to enter the passcode",
                    exit: .cancelled)
            case .error(let code, let message):
                throw Self.failure("pinentry failed at \(what): \(message) (error \(code))")
            case .inquire: try send(Assuan.command("CAN"))
            case .data, .status, .comment, .end: continue
            }
        }
    }

    private func appendSecret(_ byte: UInt8) {
        guard secretCount < secret.count else {
            secretOverflow = true
            return
        }
        secret[secretCount] = byte
        secretCount += 1
    }

    private func clearSecret() {
        if let base = secret.baseAddress { explicit_bzero(base, secret.count) }
        secretCount = 0
        secretOverflow = false
    }

    /// An error in the dialogue with pinentry, with the hint to avoid it.
    static func failure(_ message: String) -> ErrorText {
        ErrorText(
            message,
            hint: "check the pinentry program ($PINENTRY or \"pinentry\" in settings.json), or add --no-pinentry "
                + "to type the passcode on the terminal, or --passcode-stdin to pipe it")
    }
}
