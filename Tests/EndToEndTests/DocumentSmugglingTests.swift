import CordonKit
import CordonProtocol
import Foundation
import Testing

/// An ordinary same-user program trying to smuggle a document past `documents.*`: a path
/// spelled with `..` and `.`, a PDF under another name or claimed as text, a save through a
/// symlinked directory or with `..` (docs/THREAT-MODEL.md, "Documents").
@Suite struct DocumentSmugglingTests {
    /// A daemon under `policy` (admin), with the test binary registered and subscribed as the viewer.
    static func start(policy: String) async throws -> (DaemonProcess, CordonApp) {
        let root = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: root.appending("admin"), withIntermediateDirectories: true)
        try policy.write(toFile: root.appending("admin/documents.json"), atomically: true, encoding: .utf8)
        let daemon = try await DaemonProcess.started(root: root)
        let viewer = try await CordonApp.connect(appId: "com.example.viewer", socketPath: daemon.socketPath)
        return (daemon, viewer)
    }

    static let blockPDF = #"""
        {"schema": "cordon.policy.v1", "documents": {"sendTo": "any", "receiveFrom": "any", "blockedTypes": [".pdf"]}}
        """#

    /// The attacker: registers as an app, shares `argv[2]` (with `argv[3]` as contentType unless
    /// `-`) with the viewer, prints the error and its reason.
    static let share = """
        s = connect(sys.argv[1])
        call(s, "io.cordon.App.Register", {"appId": "com.example.attacker"})
        parameters = {"path": sys.argv[2], "target": "com.example.viewer"}
        if sys.argv[3] != "-":
            parameters["contentType"] = sys.argv[3]
        reply = call(s, "io.cordon.App.ShareDocument", parameters)
        print(json.dumps({"error": error(reply), "reason": reply.get("parameters", {}).get("reason", "")}))
        """

    static func writePDF(_ path: String) throws {
        try FileManager.default.createDirectory(
            atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path, withIntermediateDirectories: true)
        try Data("%PDF-1.7\n%\u{e2}\u{e3}\u{cf}\u{d3}\n1 0 obj\n".utf8).write(to: URL(fileURLWithPath: path))
    }

    @Test func aDotDotPathIsDecidedOnWhatItNames() async throws {
        let (daemon, viewer) = try await Self.start(policy: Self.blockPDF)
        defer { daemon.cleanUp() }
        try Self.writePDF(daemon.root.appending("x/report.pdf"))
        try FileManager.default.createDirectory(atPath: daemon.root.appending("y"), withIntermediateDirectories: true)
        let smuggled = daemon.root.appending("y/../x/./report.pdf")
        let answer = try await AttackScript.run(Self.share, [daemon.socketPath, smuggled, "-"], in: daemon.root)
        #expect(answer["error"] as? String == "io.cordon.App.Denied")
        #expect((answer["reason"] as? String)?.contains("blockedTypes") == true, "\(answer)")
        let missing = try await AttackScript.run(
            Self.share, [daemon.socketPath, daemon.root.appending("y/../nothing.pdf"), "-"], in: daemon.root)
        #expect(missing["error"] as? String == "io.cordon.App.Denied")
        #expect((missing["reason"] as? String)?.contains("does not resolve") == true, "\(missing)")
        await viewer.close()
        try await daemon.stop()
    }

    @Test func aPDFUnderAnotherNameOrClaimIsStillAPDF() async throws {
        let (daemon, viewer) = try await Self.start(policy: Self.blockPDF)
        defer { daemon.cleanUp() }
        let renamed = daemon.root.appending("report.txt")
        try Self.writePDF(renamed)
        let unclaimed = try await AttackScript.run(Self.share, [daemon.socketPath, renamed, "-"], in: daemon.root)
        #expect(unclaimed["error"] as? String == "io.cordon.App.Denied")
        #expect((unclaimed["reason"] as? String)?.contains("blockedTypes") == true, "\(unclaimed)")
        let claimed = try await AttackScript.run(
            Self.share, [daemon.socketPath, renamed, "text/plain"], in: daemon.root)
        #expect(claimed["error"] as? String == "io.cordon.App.Denied")
        #expect(
            claimed["reason"] as? String
                == "the content of \(renamed) is application/pdf, not the claimed text/plain", "\(claimed)")
        // Real text under the same name goes through.
        try Data("quarterly numbers\n".utf8).write(to: URL(fileURLWithPath: renamed))
        let text = try await AttackScript.run(Self.share, [daemon.socketPath, renamed, "text/plain"], in: daemon.root)
        #expect(text["error"] is NSNull, "\(text)")
        await viewer.close()
        try await daemon.stop()
    }

    @Test func aSaveCannotLeaveSaveLocations() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let work = root.appending("Documents/Work")
        let outside = root.appending("outside")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: work + "/link", withDestinationPath: outside)
        let policy = #"{"schema": "cordon.policy.v1", "documents": {"saveLocations": ["\#(work)/**"]}}"#
        let (daemon, viewer) = try await Self.start(policy: policy)
        defer { daemon.cleanUp() }
        let answer = try await AttackScript.run(
            """
            s = connect(sys.argv[1])
            out = {}
            for name, target in [("link", sys.argv[2]), ("dotdot", sys.argv[3]), ("inside", sys.argv[4])]:
                decision = call(s, "io.cordon.App.Check", {"action": "document.save", "target": target})
                out[name] = decision["parameters"]["decision"]
            print(json.dumps(out))
            """,
            [daemon.socketPath, work + "/link/leak.txt", work + "/../../outside/leak.txt", work + "/a/../ok.txt"],
            in: daemon.root)
        for name in ["link", "dotdot"] {
            let decision = try #require(answer[name] as? [String: Any])
            #expect(decision["allowed"] as? Bool == false, "\(name): \(decision)")
            #expect((decision["rules"] as? [String])?.contains { $0.contains("/documents/saveLocations") } == true)
        }
        // `a` does not exist: its directory does not resolve, and that is refused naming it.
        let inside = try #require(answer["inside"] as? [String: Any])
        #expect(inside["allowed"] as? Bool == false)
        #expect((inside["reason"] as? String)?.contains("\(work)/a/.. does not resolve") == true, "\(inside)")
        // Through the SDK: nothing is written behind the link.
        do {
            try await viewer.save(Data("leak".utf8), to: work + "/link/leak.txt")
            Issue.record("a save through a symlinked directory was allowed")
        } catch CordonError.denied(let action, _, _) {
            #expect(action == "document.save")
        }
        #expect(!FileManager.default.fileExists(atPath: outside + "/leak.txt"))
        try await viewer.save(Data("fine".utf8), to: work + "/./ok.txt")
        #expect(FileManager.default.fileExists(atPath: work + "/ok.txt"))
        await viewer.close()
        try await daemon.stop()
    }

    @Test func theReceiverReadsWhatWasDecidedOnNotWhatTheSenderSwappedIn() async throws {
        let (daemon, viewer) = try await Self.start(policy: Self.blockPDF)
        defer { daemon.cleanUp() }
        var events = viewer.events.makeAsyncIterator()
        #expect(await events.next()?.kind == .state)
        let path = daemon.root.appending("notes.txt")
        try Data("the original notes\n".utf8).write(to: URL(fileURLWithPath: path))
        // The attacker shares a harmless text file, then swaps a PDF in under the same path.
        let answer = try await AttackScript.run(
            """
            s = connect(sys.argv[1])
            call(s, "io.cordon.App.Register", {"appId": "com.example.attacker"})
            reply = call(s, "io.cordon.App.ShareDocument", {"path": sys.argv[2], "target": "com.example.viewer"})
            with open(sys.argv[2] + ".new", "wb") as f:
                f.write(b"%PDF-1.7 swapped in")
            os.rename(sys.argv[2] + ".new", sys.argv[2])
            other = connect(sys.argv[1])
            stolen = call(other, "io.cordon.App.OpenDocument", {"id": sys.argv[3] if len(sys.argv) > 3 else "x"})
            print(json.dumps({"error": error(reply), "stolen": error(stolen)}))
            """, [daemon.socketPath, path], in: daemon.root)
        #expect(answer["error"] is NSNull, "\(answer)")
        // Another process cannot fetch it (it is not the target).
        #expect(answer["stolen"] as? String == "io.cordon.App.NotRegistered")
        let event = try #require(await events.next())
        let document = try #require(event.document)
        #expect(document.contentType == "text/plain")
        let handle = try await viewer.openDocument(document)
        #expect(try handle.readToEnd() == Data("the original notes\n".utf8))
        try handle.close()
        // Each document is handed over once.
        await #expect(throws: CordonError.self) { _ = try await viewer.openDocument(document) }
        await viewer.close()
        try await daemon.stop()
    }
}
