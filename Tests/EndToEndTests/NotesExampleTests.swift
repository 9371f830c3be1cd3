import CordonKit
import CordonProtocol
import Foundation
import Testing

/// The example app halts its I/O when the key goes and resumes when it returns.
@Suite struct NotesExampleTests {
    @Test func notesHaltOnLogoutAndResumeOnUnlock() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")

        let output = daemon.root.appending("notes.out")
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let notes = Process()
        notes.executableURL = Binaries.notes
        notes.arguments = [
            "--dir", daemon.root.path, "--data-dir", daemon.root.appending("data"), "--interval-ms", "20", "--socket",
            daemon.socketPath,
        ]
        notes.standardOutput = FileHandle(forWritingAtPath: output)
        try notes.run()
        defer { if notes.isRunning { notes.terminate() } }
        let read = { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }

        try await eventually("the app registered") { try await client.apps().count == 1 }
        try await client.unlock(passcode: "2468")
        try await eventually("notes are written") { read().contains("wrote note #2") }
        try await client.logout()
        try await eventually("the app halted and acknowledged") { read().contains("acknowledged seq") }
        try await eventually("the agent sees compliance") { try await client.apps().first?.compliance == .compliant }
        let halted = read()
        #expect(halted.contains("file closed, key dropped, I/O halted"))
        try await client.unlock(passcode: "2468")
        try await eventually("notes resume with the key received a second time") {
            read().components(separatedBy: "key received").count == 3
        }
        try await eventually("writing resumes") { read().dropFirst(halted.count).contains("wrote note #") }
        try await daemon.stop()
        try await eventually("the app exits when the agent goes") { !notes.isRunning }
        #expect(read().contains("agent connection ended"))
    }

    @Test func notesCopySaveAndShareAsThePolicyAllows() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        let exports = daemon.root.appending("exports")
        try FileManager.default.createDirectory(atPath: exports, withIntermediateDirectories: true)
        func start(_ name: String, _ extra: [String]) throws -> (Process, () -> String) {
            let output = daemon.root.appending("\(name).out")
            _ = FileManager.default.createFile(atPath: output, contents: nil)
            let process = Process()
            process.executableURL = Binaries.notes
            process.arguments =
                ["--app-id", "com.example.\(name)", "--dir", daemon.root.appending(name), "--interval-ms", "20"]
                + ["--socket", daemon.socketPath, "--data-dir", daemon.root.appending("data")] + extra
            try FileManager.default.createDirectory(
                atPath: daemon.root.appending(name), withIntermediateDirectories: true)
            process.standardOutput = FileHandle(forWritingAtPath: output)
            try process.run()
            return (process, { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" })
        }
        let (reader, readerOutput) = try start("reader", [])
        defer { if reader.isRunning { reader.terminate() } }
        try await eventually("the reader is subscribed") { try await client.apps().first?.subscribed == true }
        let (writer, writerOutput) = try start(
            "notes", ["--export-dir", exports, "--share-with", "com.example.reader"])
        defer { if writer.isRunning { writer.terminate() } }
        try await eventually("a note is shared") { writerOutput().contains("shared note #5 with com.example.reader") }
        #expect(writerOutput().contains("copied note #5 to the managed pasteboard"))
        // The fifth note written (ticks before the key arrived wrote nothing): plain text, as saved.
        #expect(try String(contentsOfFile: exports + "/note-5.txt", encoding: .utf8).hasPrefix("note "))
        try await eventually("the reader received it") {
            readerOutput().contains("received document \(exports)/note-5.txt from com.example.notes")
        }
        let peer = try await CordonApp.connect(appId: "com.example.peer", socketPath: daemon.socketPath)
        #expect(try await peer.pasteboard.paste().source == "com.example.notes")
        await peer.close()
        try await daemon.stop()
    }
}
