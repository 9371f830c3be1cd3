import CordonProtocol
import Foundation
import Testing

/// The example app halts its I/O when the key goes and resumes when it returns. cordond, the CLI
/// and the apps run as an ordinary user outside test mode (``UserAgent``).
@Suite struct NotesExampleTests {
    static let policy = #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#

    func unlock(_ agent: UserAgent) async throws {
        let unlocked = try await agent.cli(["unlock", "--passcode-stdin"], input: UserAgent.passcode + "\n")
        try #require(unlocked.status == 0, "unlock: \(unlocked.stderr)")
    }

    @Test func notesHaltOnLogoutAndResumeOnUnlock() async throws {
        let agent = try await UserAgent(policy: Self.policy, initialize: false)
        defer { agent.cleanUp() }
        #expect(try await agent.cli(["init", "--passcode-stdin"], input: UserAgent.passcode + "\n").status == 0)
        let (notes, read) = try agent.startNotes(
            [
                "--dir", agent.home.appending("notes"), "--data-dir", agent.home.appending("data"), "--interval-ms",
                "20",
            ],
            output: "notes")

        try await eventually("the app registered") { try await agent.apps().count == 1 }
        try await unlock(agent)
        try await eventually("notes are written") { read().contains("wrote note #2") }
        #expect(try await agent.cli(["logout"]).status == 0)
        try await eventually("the app halted and acknowledged") { read().contains("acknowledged seq") }
        try await eventually("the agent sees compliance") { try await agent.apps().first?.compliance == .compliant }
        let halted = read()
        #expect(halted.contains("file closed, key dropped, I/O halted"))
        try await unlock(agent)
        try await eventually("notes resume with the key received a second time") {
            read().components(separatedBy: "key received").count == 3
        }
        try await eventually("writing resumes") { read().dropFirst(halted.count).contains("wrote note #") }
        #expect(agent.terminate() == 0)
        try await eventually("the app exits when the agent goes") { !agent.isRunning(notes) }
        #expect(read().contains("agent connection ended"))
    }

    @Test func notesCopySaveAndShareAsThePolicyAllows() async throws {
        let agent = try await UserAgent(policy: Self.policy)
        defer { agent.cleanUp() }
        let exports = agent.home.appending("exports")
        func start(_ name: String, _ extra: [String]) throws -> @Sendable () -> String {
            let arguments =
                ["--app-id", "com.example.\(name)", "--dir", agent.home.appending(name), "--interval-ms", "20"]
                + ["--data-dir", agent.home.appending("data")] + extra
            return try agent.startNotes(arguments, output: name).read
        }
        // The directories are the user's, made by the user.
        let made = try await agent.attack(
            """
            for d in sys.argv[2:]:
                os.makedirs(d, exist_ok=True)
            print(json.dumps({"made": True}))
            """, [exports, agent.home.appending("reader"), agent.home.appending("notes")])
        #expect(made["made"] as? Bool == true)
        let readerOutput = try start("reader", [])
        try await eventually("the reader is subscribed") { try await agent.apps().first?.subscribed == true }
        let writerOutput = try start("notes", ["--export-dir", exports, "--share-with", "com.example.reader"])
        try await eventually("a note is shared") { writerOutput().contains("shared note #5 with com.example.reader") }
        #expect(writerOutput().contains("copied note #5 to the managed pasteboard"))
        // The fifth note written (ticks before the key arrived wrote nothing): plain text, as saved.
        #expect(try String(contentsOfFile: exports + "/note-5.txt", encoding: .utf8).hasPrefix("note "))
        try await eventually("the reader received it") {
            readerOutput().contains("received document \(exports)/note-5.txt from com.example.notes")
        }
        let peer = try await agent.attack(
            """
            s = connect(sys.argv[1])
            call(s, "io.cordon.App.Register", {"appId": "com.example.peer"})
            harden()
            pasted = call(s, "io.cordon.Pasteboard.Paste")
            print(json.dumps({"error": error(pasted), "source": pasted.get("parameters", {}).get("source")}))
            """)
        #expect(peer["source"] as? String == "com.example.notes", "\(peer)")
    }
}
