import CordonProtocol
import Foundation
import Testing

@testable import CordonPrompt

/// `PinentrySession` against a real child process speaking Assuan (a shell script standing in for
/// pinentry, as `pinentry-tty` would answer), and `PinentryProgram.find` with the environment and
/// settings file it is given.
@Suite struct PinentrySessionTests {
    /// A pinentry whose GETPIN answers `answer` (a whole Assuan reply: `D …` then `OK`, or `ERR …`),
    /// and that writes every command it got to `<directory>/commands`.
    static func fakePinentry(answer: String) throws -> (program: String, directory: String) {
        let directory = NSTemporaryDirectory() + "cordon-pinentry-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let script = """
            #!/bin/sh
            echo "OK Pleased to meet you"
            while IFS= read -r line; do
              echo "$line" >> "\(directory)/commands"
              case "$line" in
                GETPIN*) printf '%s\\n' \(answer) ;;
                BYE*) echo OK; exit 0 ;;
                *) echo OK ;;
              esac
            done
            """
        let path = directory + "/pinentry"
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return (path, directory)
    }

    static func session(_ program: String) throws -> PinentrySession {
        try PinentrySession(program: PinentryProgram(path: program, ttyName: nil, ttyType: nil), environment: [:])
    }

    @Test func thePasscodeTheUserTypedIsReturnedAndTheDialogueSaysWhatFor() throws {
        let fake = try Self.fakePinentry(answer: "'D 2468%25x' 'OK'")
        defer { try? FileManager.default.removeItem(atPath: fake.directory) }
        let session = try Self.session(fake.program)
        // `%25` is Assuan's escape for `%`.
        #expect(try session.getPin(description: "Unlock the container", error: "Wrong passcode") == "2468%x")
        session.close()
        let commands = try String(contentsOfFile: fake.directory + "/commands", encoding: .utf8)
        #expect(commands.contains("SETDESC Unlock the container"))
        #expect(commands.contains("SETERROR Wrong passcode"))
        #expect(commands.contains("GETPIN"))
    }

    @Test func cancellingIsACancelledFailure() throws {
        let fake = try Self.fakePinentry(answer: "'ERR 83886179 Operation cancelled <Pinentry>'")
        defer { try? FileManager.default.removeItem(atPath: fake.directory) }
        let session = try Self.session(fake.program)
        defer { session.close() }
        #expect(
            throws: ErrorText(
                "the passcode prompt was cancelled", hint: "run the command again to enter the passcode",
                exit: .cancelled)
        ) { try session.getPin(description: "Unlock") }
    }

    @Test func anEmptyPasscodeIsAUsageFailure() throws {
        let fake = try Self.fakePinentry(answer: "'OK'")
        defer { try? FileManager.default.removeItem(atPath: fake.directory) }
        let session = try Self.session(fake.program)
        defer { session.close() }
        #expect(
            throws: ErrorText("no passcode was entered", hint: "type the passcode, then press Enter", exit: .usage)
        ) { try session.getPin(description: "Unlock") }
    }

    @Test func aProgramThatIsNotThereIsRefusedNamingWhereItWasConfigured() throws {
        #expect(
            throws: ErrorText(
                "the pinentry program '/nonexistent/pinentry' (from PINENTRY) is not an executable file",
                hint: "fix PINENTRY, or add --no-pinentry to type the passcode on the terminal")
        ) { try PinentryProgram.find(environment: ["DISPLAY": ":0", "PINENTRY": "/nonexistent/pinentry"]) }
    }

    @Test func aSettingsFileWhosePinentryIsNotAStringIsRefused() throws {
        let directory = NSTemporaryDirectory() + "cordon-settings-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try #"{"pinentry": 7}"#.write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        #expect(
            throws: ErrorText(
                "\(directory)/settings.json: \"pinentry\" must be a string", hint: "give the program's name or path")
        ) { try PinentryProgram.find(environment: ["DISPLAY": ":0", "CORDON_CONFIG_DIR": directory]) }
    }

    @Test func withNeitherDisplayNorTerminalThereIsNoPinentry() throws {
        let found = try PinentryProgram.find(environment: ["PINENTRY": "/bin/true"])
        // Under CI the runner's standard input is no terminal: then no display means no pinentry.
        #expect((found == nil) == (isatty(STDIN_FILENO) == 0))
        #expect(try PinentryProgram.find(environment: ["DISPLAY": ":0", "PINENTRY": "/bin/true"])?.path == "/bin/true")
    }
}
