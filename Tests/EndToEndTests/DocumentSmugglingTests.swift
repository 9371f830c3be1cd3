import Foundation
import Testing

/// An ordinary same-user program trying to smuggle a document past `documents.*`: a path
/// spelled with `..` and `.`, a PDF under another name or claimed as text, a save through a
/// symlinked directory or with `..` (docs/THREAT-MODEL.md, "Documents"). The agent, the apps
/// and the attacker are one ordinary user (``UserAgent``: outside test mode, the admin policy
/// root's); the viewer is a Python program registered (and subscribed) beside the attacker
/// (``DocumentSenderViewTests/apps``), the SDK's save the notes example's.
@Suite struct DocumentSmugglingTests {
    /// Unbound apps are trusted (as the suite always had them), so the Python viewer and attacker
    /// register managed.
    static let blockPDF = #"""
        {"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"},
         "documents": {"sendTo": "any", "receiveFrom": "any", "blockedTypes": [".pdf"]}}
        """#

    /// The attacker: with the viewer registered and subscribed (``DocumentSenderViewTests/apps``),
    /// shares each `argv[2]` (with `argv[3]` as contentType unless `-`) with the viewer, prints
    /// the error and its reason.
    static func share(_ agent: UserAgent, _ path: String, claiming contentType: String = "-") async throws
        -> [String: Any]
    {
        try await agent.attack(
            DocumentSenderViewTests.apps + "\n"
                + """
                print(json.dumps(share(sys.argv[2], None if sys.argv[3] == "-" else sys.argv[3])))
                """, [path, contentType])
    }

    static func writePDF(_ path: String) throws {
        try FileManager.default.createDirectory(
            atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path, withIntermediateDirectories: true)
        try Data("%PDF-1.7\n%\u{e2}\u{e3}\u{cf}\u{d3}\n1 0 obj\n".utf8).write(to: URL(fileURLWithPath: path))
    }

    @Test func aDotDotPathIsDecidedOnWhatItNames() async throws {
        let agent = try await UserAgent(policy: Self.blockPDF)
        defer { agent.cleanUp() }
        try Self.writePDF(agent.home.appending("x/report.pdf"))
        try FileManager.default.createDirectory(atPath: agent.home.appending("y"), withIntermediateDirectories: true)
        try await agent.give(agent.home.path)
        let smuggled = agent.home.appending("y/../x/./report.pdf")
        let answer = try await Self.share(agent, smuggled)
        #expect(answer["error"] as? String == "io.cordon.App.Denied")
        #expect((answer["reason"] as? String)?.contains("blockedTypes") == true, "\(answer)")
        let missing = try await Self.share(agent, agent.home.appending("y/../nothing.pdf"))
        #expect(missing["error"] as? String == "io.cordon.App.Denied")
        #expect((missing["reason"] as? String)?.contains("does not resolve") == true, "\(missing)")
    }

    @Test func aPDFUnderAnotherNameOrClaimIsStillAPDF() async throws {
        let agent = try await UserAgent(policy: Self.blockPDF)
        defer { agent.cleanUp() }
        let renamed = agent.home.appending("report.txt")
        try Self.writePDF(renamed)
        try await agent.give(renamed)
        let unclaimed = try await Self.share(agent, renamed)
        #expect(unclaimed["error"] as? String == "io.cordon.App.Denied")
        #expect((unclaimed["reason"] as? String)?.contains("blockedTypes") == true, "\(unclaimed)")
        let claimed = try await Self.share(agent, renamed, claiming: "text/plain")
        #expect(claimed["error"] as? String == "io.cordon.App.Denied")
        #expect(
            claimed["reason"] as? String
                == "the content of \(renamed) is application/pdf, not the claimed text/plain", "\(claimed)")
        // Real text under the same name goes through.
        try Data("quarterly numbers\n".utf8).write(to: URL(fileURLWithPath: renamed))
        let text = try await Self.share(agent, renamed, claiming: "text/plain")
        #expect(text["error"] is NSNull, "\(text)")
    }

    @Test func aSaveCannotLeaveSaveLocations() async throws {
        // The user's tree, in a directory of root's (the policy names it before the agent starts).
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let work = root.appending("Documents/Work")
        let outside = root.appending("outside")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: work + "/link", withDestinationPath: outside)
        try await NobodyAgent.run(
            ["/bin/chown", "-R", "\(UserAgent.uid):\(TestUser.gid)", root.appending("Documents"), outside])
        let policy = #"""
            {"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"},
             "documents": {"saveLocations": ["\#(work)/**"]}}
            """#
        let agent = try await UserAgent(policy: policy)
        defer { agent.cleanUp() }
        let answer = try await agent.attack(
            """
            s = connect(sys.argv[1])
            out = {}
            for name, target in [("link", sys.argv[2]), ("dotdot", sys.argv[3]), ("inside", sys.argv[4])]:
                decision = call(s, "io.cordon.App.Check", {"action": "document.save", "target": target})
                out[name] = decision["parameters"]["decision"]
            print(json.dumps(out))
            """,
            [work + "/link/leak.txt", work + "/../../outside/leak.txt", work + "/a/../ok.txt"])
        for name in ["link", "dotdot"] {
            let decision = try #require(answer[name] as? [String: Any])
            #expect(decision["allowed"] as? Bool == false, "\(name): \(decision)")
            #expect((decision["rules"] as? [String])?.contains { $0.contains("/documents/saveLocations") } == true)
        }
        // `a` does not exist: its directory does not resolve, and that is refused naming it.
        let inside = try #require(answer["inside"] as? [String: Any])
        #expect(inside["allowed"] as? Bool == false)
        #expect((inside["reason"] as? String)?.contains("\(work)/a/.. does not resolve") == true, "\(inside)")
        // Through the SDK (the notes example saving every fifth note, run as the user): nothing is
        // written behind the link; the refusal is the save's (`CordonError.denied` of
        // `document.save`, which the example reports as a refusal by the policy).
        let leaking = try await agent.startNotes(
            appId: "com.example.leaker", arguments: ["--export-dir", work + "/link"])
        try await eventually("the save through the link was refused") {
            leaking.read().contains("saving refused by the policy")
        }
        #expect(!leaking.read().contains("saved note"), "a save through a symlinked directory was allowed")
        let behind = try FileManager.default.contentsOfDirectory(atPath: outside)
        #expect(behind.isEmpty, "\(behind)")
        let saving = try await agent.startNotes(appId: "com.example.saver", arguments: ["--export-dir", work + "/."])
        try await eventually("the save inside went through") { saving.read().contains("saved note #5 to") }
        #expect(saving.read().contains("saved note #5 to \(work)/./note-5.txt"), "\(saving.read())")
        #expect(FileManager.default.fileExists(atPath: work + "/note-5.txt"))
    }

    @Test func theReceiverReadsWhatWasDecidedOnNotWhatTheSenderSwappedIn() async throws {
        let agent = try await UserAgent(policy: Self.blockPDF)
        defer { agent.cleanUp() }
        let path = agent.home.appending("notes.txt")
        try Data("the original notes\n".utf8).write(to: URL(fileURLWithPath: path))
        try await agent.give(path)
        // The attacker shares a harmless text file, then swaps a PDF in under the same path.
        let answer = try await agent.attack(
            DocumentSenderViewTests.apps + "\n"
                + """
                path = sys.argv[2]
                shared = share(path)
                with open(path + ".new", "wb") as f:
                    f.write(b"%PDF-1.7 swapped in")
                os.rename(path + ".new", path)
                other = connect(sys.argv[1])
                stolen = call(other, "io.cordon.App.OpenDocument", {"id": "x"})
                # The viewer reads it (its event, then OpenDocument), then asks for it once more.
                received = receive(shared)
                again = call(connect(sys.argv[1]), "io.cordon.App.OpenDocument",
                             {"id": received["id"], "token": token})
                print(json.dumps({"error": shared["error"], "stolen": error(stolen), "received": received,
                                  "again": error(again)}))
                """, [path])
        #expect(answer["error"] is NSNull, "\(answer)")
        // Another process cannot fetch it (it is not the target).
        #expect(answer["stolen"] as? String == "io.cordon.App.NotRegistered")
        let received = try #require(answer["received"] as? [String: Any])
        #expect(received["contentType"] as? String == "text/plain")
        #expect(received["head"] as? String == "the original notes\n", "\(received)")
        // Each document is handed over once.
        #expect(answer["again"] is String, "\(answer)")
    }
}
