import CordonKit
import CordonProtocol
import Foundation

/// Exports a note the way the policy allows: to the managed pasteboard (maybe cut to the
/// policy's character limit), as a plain-text file (`document.save`), and to another app
/// (`document.send` / `document.receive`).
struct NotesExport {
    let app: CordonApp
    let options: NotesOptions
    let say: @Sendable (String) -> Void

    func export(_ note: String, number: Int, to directory: String) async {
        do {
            let copied = try await app.pasteboard.copy(note)
            say(
                "copied note #\(number) to the managed pasteboard" + (copied.truncatedTo.map { ", cut to \($0)" } ?? "")
            )
        } catch {
            say("pasteboard: \(error)")
        }
        let path = directory + "/note-\(number).txt"
        do {
            try await app.save(Data(note.utf8), to: path, contentType: "text/plain")
            say("saved note #\(number) to \(path)")
        } catch CordonError.denied(_, let reason, _) {
            say("saving refused by the policy: \(reason)")
            return
        } catch {
            say("saving failed: \(error)")
            return
        }
        guard let target = options.shareWith else { return }
        do {
            try await app.share(file: path, with: target, contentType: "text/plain")
            say("shared note #\(number) with \(target)")
        } catch {
            say("sharing with \(target) refused: \(error)")
        }
    }
}
