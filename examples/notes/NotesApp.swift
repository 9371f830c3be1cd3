import CordonKit
import Crypto
import Foundation

/// `cordon-notes`: an example wrapped app (manual integration).
///
/// It keeps notes encrypted with its own key, writes one every interval while the key is
/// available, and on `EncryptionKeyUnavailable` closes its file, drops the key and
/// acknowledges; when the key comes back it reopens the notes and resumes.
@main
struct NotesApp {
    static func main() async {
        let options = NotesOptions.parse(CommandLine.arguments.dropFirst())
        let say = { (line: String) in
            FileHandle.standardOutput.write(Data("[notes] \(line)\n".utf8))
        }
        let app: CordonApp
        do {
            app = try await CordonApp.connect(appId: options.appId, socketPath: options.socket)
        } catch {
            say("cannot register with cordond: \(error)")
            exit(3)
        }
        say("registered as \(app.appId) (managed: \(app.managed))")
        let store = NoteStore(path: options.directory + "/notes.enc")
        let writer = Task {
            var count = 0
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(options.intervalMs))
                count += 1
                if let written = await store.append("note \(count) at \(Date())") {
                    say("wrote note #\(written) (encrypted)")
                }
            }
        }
        for await event in app.events {
            switch event.kind {
            case .state, .encryptionKeyAvailable:
                say("event \(event.kind.rawValue) (\(event.reason.rawValue)), state \(event.state.rawValue)")
                guard event.keyAvailable, await !store.isOpen else { continue }
                do {
                    let existing = try await store.open(key: try await app.key())
                    say("key received; notes reopened (\(existing) readable), resuming I/O")
                } catch {
                    say("could not open the notes: \(error)")
                }
            case .encryptionKeyUnavailable:
                await store.close()
                say("key gone (\(event.reason.rawValue)): file closed, key dropped, I/O halted")
                if event.reason != .agentUnavailable {
                    try? await app.acknowledge(event, status: .halted)
                    say("acknowledged seq \(event.seq)")
                }
            case .wiped:
                await store.close()
                say("container wiped: the notes can never be decrypted again")
            default:
                say("event \(event.kind.rawValue) (\(event.reason.rawValue)), state \(event.state.rawValue)")
            }
        }
        writer.cancel()
        say("agent connection ended; exiting with I/O halted")
    }
}

/// Command-line options of the example.
struct NotesOptions {
    var appId = "com.example.notes"
    var directory = FileManager.default.currentDirectoryPath
    var intervalMs = 500
    var socket: String?

    static func parse(_ arguments: ArraySlice<String>) -> NotesOptions {
        var options = NotesOptions()
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--app-id": options.appId = iterator.next() ?? options.appId
            case "--dir": options.directory = iterator.next() ?? options.directory
            case "--interval-ms": options.intervalMs = iterator.next().flatMap(Int.init) ?? options.intervalMs
            case "--socket": options.socket = iterator.next()
            default:
                print("usage: cordon-notes [--app-id ID] [--dir DIR] [--interval-ms N] [--socket PATH]")
                exit(2)
            }
        }
        return options
    }
}
