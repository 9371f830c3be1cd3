import CordonKit
import CordonProtocol
import Crypto
import Foundation

/// `cordon-notes`: an example wrapped app (manual integration).
///
/// It keeps notes in its `SecureStore` (encrypted under a key derived from its own), writes one every interval while the key is
/// available, and on `EncryptionKeyUnavailable` closes its file, drops the key and
/// acknowledges; when the key comes back it reopens the notes and resumes. With `--export-dir`
/// every fifth note is also copied to the managed pasteboard and saved there as plain text (as
/// the policy's pasteboard and `document.save` rules allow), and with `--share-with` handed to
/// that app; documents other apps hand to it arrive as `openDocument` events.
@main
struct NotesApp {
    static func main() async {
        let options = NotesOptions.parse(CommandLine.arguments.dropFirst())
        let say: @Sendable (String) -> Void = { line in
            try? FileHandle.standardOutput.write(contentsOf: Data("[notes] \(line)\n".utf8))
        }
        let app: CordonApp
        do {
            app = try await CordonApp.connect(appId: options.appId, socketPath: options.socket)
        } catch {
            say("cannot register with cordond: \(error)")
            exit(3)
        }
        say("registered as \(app.appId) (managed: \(app.managed))")
        let store: NoteStore
        do {
            store = try NoteStore(app: app, dataDirectory: options.dataDirectory)
        } catch {
            say("cannot open the notes: \(error)")
            exit(3)
        }
        let writer = Task {
            var count = 0
            var reported: String?
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(options.intervalMs))
                count += 1
                let note = "note \(count) at \(Date())"
                let written = await store.append(note)
                if written == nil, let failure = await store.failure, failure != reported {
                    say("could not write note \(count): \(failure)")
                    reported = failure
                }
                if let written {
                    say("wrote note #\(written) (encrypted)")
                    if written % 5 == 0, let directory = options.exportDirectory {
                        await NotesExport(app: app, options: options, say: say).export(
                            note, number: written, to: directory)
                    }
                }
            }
        }
        for await event in app.events {
            switch event.payload {
            case .state, .encryptionKeyAvailable:
                say("event \(event.kind.rawValue) (\(event.reason.rawValue)), state \(event.state.rawValue)")
                guard event.keyAvailable, await !store.isOpen else { continue }
                do {
                    let existing = try await store.open()
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
            case .openDocument(let document):
                say("received document \(document.path) from \(document.sender)")
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
    /// The agent's data directory, where `SecureStore` keeps the notes (default: CordonKit's).
    var dataDirectory: String?
    var intervalMs = 500
    var socket: String?
    var exportDirectory: String?
    var shareWith: String?

    static func parse(_ arguments: ArraySlice<String>) -> NotesOptions {
        var options = NotesOptions()
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--app-id": options.appId = iterator.next() ?? options.appId
            case "--dir": options.directory = iterator.next() ?? options.directory
            case "--data-dir": options.dataDirectory = iterator.next()
            case "--interval-ms": options.intervalMs = iterator.next().flatMap(Int.init) ?? options.intervalMs
            case "--socket": options.socket = iterator.next()
            case "--export-dir": options.exportDirectory = iterator.next()
            case "--share-with": options.shareWith = iterator.next()
            default:
                print(
                    "usage: cordon-notes [--app-id ID] [--dir DIR] [--data-dir DIR] [--interval-ms N] [--socket PATH] "
                        + "[--export-dir DIR] [--share-with APP-ID]")
                exit(2)
            }
        }
        return options
    }
}
