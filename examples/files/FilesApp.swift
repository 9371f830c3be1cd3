import CordonKit
import CordonProtocol
import Foundation

/// `cordon-files`: an example app that keeps its files with `SecureFile` — age files only it can
/// read, which close with the container (docs/ARCHITECTURE.md, "Storage").
///
/// It registers, then runs each line of its standard input as a command, as soon as it arrives
/// (a write still streaming from a pipe does not hold up the next command):
///
/// - `write PATH SOURCE`: encrypts the contents of the file SOURCE to PATH;
/// - `stream PATH SOURCE`: encrypts what SOURCE (a pipe, say) gives until its end, chunk by chunk;
/// - `read PATH OUTPUT`: decrypts PATH and writes the plain text to OUTPUT;
/// - `recipient`: prints the app's age recipient, for `age -r`.
///
/// It prints one line for what each command did and one for each event the agent sends it.
@main
struct FilesApp {
    static func main() async {
        var appId = "com.example.files"
        var socket: String?
        var arguments = CommandLine.arguments.dropFirst().makeIterator()
        while let argument = arguments.next() {
            switch argument {
            case "--app-id": appId = arguments.next() ?? appId
            case "--socket": socket = arguments.next()
            default:
                print("usage: cordon-files [--app-id ID] [--socket PATH] < COMMANDS")
                exit(2)
            }
        }
        let app: CordonApp
        do {
            app = try await CordonApp.connect(appId: appId, socketPath: socket)
        } catch {
            say("cannot register with cordond: \(error)")
            exit(3)
        }
        say("registered as \(app.appId)")
        let files = SecureFile(app: app)
        let commands = AsyncStream<String> { continuation in
            Thread.detachNewThread {
                while let line = readLine() { continuation.yield(line) }
                continuation.finish()
            }
        }
        let runner = Task {
            await withTaskGroup(of: Void.self) { group in
                for await line in commands {
                    group.addTask { await run(line, with: files) }
                }
            }
        }
        for await event in app.events {
            say("event \(event.kind.rawValue) (\(event.reason.rawValue))")
        }
        runner.cancel()
        say("agent connection ended")
    }

    /// Runs one command line and says how it went.
    static func run(_ line: String, with files: SecureFile) async {
        let words = line.split(separator: " ").map(String.init)
        do {
            switch (words.first, words.count) {
            case ("write", 3):
                try await files.write(try Data(contentsOf: URL(fileURLWithPath: words[2])), to: words[1])
                say("wrote \(words[1])")
            case ("stream", 3):
                let source = open(words[2], O_RDONLY | O_CLOEXEC)
                guard source >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                defer { close(source) }
                try await files.write(from: source, to: words[1])
                say("wrote \(words[1])")
            case ("read", 3):
                let plain = try await files.read(words[1])
                try plain.write(to: URL(fileURLWithPath: words[2]))
                say("read \(words[1])")
            case ("recipient", 1):
                say("recipient \(try await files.recipient())")
            default:
                say("unknown command: \(line)")
            }
        } catch CordonError.containerLocked(let appId, let state) {
            say("\(line): the container is locked for \(appId) (\(state))")
        } catch {
            say("\(line): \(error)")
        }
    }

    /// Prints `line` whole, at once (commands run concurrently).
    static func say(_ line: String) {
        try? FileHandle.standardOutput.write(contentsOf: Data("[files] \(line)\n".utf8))
    }
}
