import Foundation
import Testing

/// Sharing and saving documents, decided by the real daemon's policy. cordond, the CLI and the
/// apps run as an ordinary user outside test mode (``UserAgent``): the sender and the receiver are
/// one Python varlink program (``UserApps``) on two registrations, and saving goes through
/// CordonKit (the notes example, which saves every fifth note where `--export-dir` says).
@Suite struct DocumentHandOffTests {
    static let trusted = #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#

    /// cordond as the user on root's `policy` (unbound apps trusted besides), with the sender
    /// (`notes`, com.example.notes) and the receiver (`viewer`, com.example.viewer) registered.
    static func start(policy: String? = nil) async throws -> (UserAgent, UserApps) {
        let agent = try await UserAgent(policy: trusted)
        do {
            if let policy {
                try await agent.applyAdminPolicy(policy, name: "documents.json")
            }
            let apps = try agent.startApps()
            try await apps.register("notes", appId: "com.example.notes")
            try await apps.register("viewer", appId: "com.example.viewer")
            return (agent, apps)
        } catch {
            agent.cleanUp()
            throw error
        }
    }

    /// A PDF in the user's directory, the user's.
    static func document(in agent: UserAgent) async throws -> String {
        let path = agent.home.appending("report.pdf")
        try Data("%PDF-1.7".utf8).write(to: URL(fileURLWithPath: path))
        try await agent.give(path)
        return path
    }

    /// `app` shares `path` with `target` (`ShareDocument`); the reply.
    static func share(_ apps: UserApps, _ app: String, _ path: String, with target: String, contentType: String? = nil)
        async throws -> [String: Any]
    {
        var parameters: [String: Any] = ["path": path, "target": target]
        if let contentType { parameters["contentType"] = contentType }
        return try await apps.call(app, "io.cordon.App.ShareDocument", parameters)
    }

    /// The events `name` has heard so far.
    static func events(_ apps: UserApps, _ name: String) async throws -> [[String: Any]] {
        try await apps.send(["op": "events", "name": name])["events"] as? [[String: Any]] ?? []
    }

    /// What CordonKit's `openDocument` does: `OpenDocument` on a fresh connection with the
    /// receiver's token, and a read through the descriptor the agent passed (not by the path).
    static let openDocument = """
        import array
        s = connect(sys.argv[1])
        s.sendall(json.dumps({"method": "io.cordon.App.OpenDocument",
                              "parameters": {"id": DOCUMENT, "token": apps["viewer"]["token"]}}).encode() + b"\\0")
        data, fds = b"", []
        while not data.endswith(b"\\0"):
            message, ancillary, _, _ = s.recvmsg(65536, socket.CMSG_SPACE(4))
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds += array.array("i", payload[:4]).tolist()
            if not message:
                break
            data += message
        s.close()
        reply = json.loads(data[:-1].decode())
        out["error"] = error(reply)
        out["descriptors"] = len(fds)
        if fds:
            out["content"] = os.pread(fds[0], 4096, 0).decode("latin-1")
            for fd in fds:
                os.close(fd)
        """

    @Test func aSharedDocumentReachesTheRunningTarget() async throws {
        let (agent, apps) = try await Self.start()
        defer {
            apps.stop()
            agent.cleanUp()
        }
        try await apps.send(["op": "subscribe", "name": "viewer"])
        try await eventually("the receiver hears the state") { try await !Self.events(apps, "viewer").isEmpty }
        #expect(try await Self.events(apps, "viewer").first?["kind"] as? String == "State")
        let path = try await Self.document(in: agent)
        let shared = try await Self.share(
            apps, "notes", path, with: "com.example.viewer", contentType: "application/pdf")
        #expect(varlinkError(shared) == nil, "\(shared)")
        try await eventually("the receiver hears of the document") { try await Self.events(apps, "viewer").count >= 2 }
        let event = try await Self.events(apps, "viewer")[1]
        #expect(event["kind"] as? String == "OpenDocument", "\(event)")
        let document = try #require(event["document"] as? [String: Any], "\(event)")
        #expect(document["path"] as? String == path)
        #expect(document["contentType"] as? String == "application/pdf")
        #expect(document["sender"] as? String == "com.example.notes")
        // The receiver reads it through the descriptor the agent opened, not by its path.
        let id = try #require(document["id"] as? String)
        let opened = try await apps.send([
            "op": "exec", "name": "viewer",
            "code": Self.openDocument.replacingOccurrences(of: "DOCUMENT", with: "\"\(id)\""),
        ])
        #expect(opened["error"] is NSNull, "\(opened)")
        #expect(opened["descriptors"] as? Int == 1, "\(opened)")
        #expect(opened["content"] as? String == "%PDF-1.7", "\(opened)")

        let absent = try await Self.share(apps, "notes", path, with: "com.example.absent")
        #expect(varlinkError(absent) == "io.cordon.App.TargetNotRunning", "\(absent)")
        #expect(varlinkParameters(absent)["appId"] as? String == "com.example.absent", "\(absent)")
        #expect(agent.terminate() == 0)
    }

    @Test func thePolicyRefusesOnEitherEnd() async throws {
        let policy = #"""
            {"schema": "cordon.policy.v1", "documents": {"sendTo": "any", "receiveFrom": "any", "blockedTypes": [".exe"]},
             "overrides": [{"apps": ["com.example.viewer"], "documents": {"receiveFrom": "none"}},
                           {"apps": ["com.example.notes"], "documents": {"sendTo": "managed", "allowedTargets": ["com.example.mail"]}}]}
            """#
        let (agent, apps) = try await Self.start(policy: policy)
        defer {
            apps.stop()
            agent.cleanUp()
        }
        // The receivers are subscribed, as a running target is.
        try await apps.send(["op": "subscribe", "name": "viewer"])
        try await apps.send(["op": "subscribe", "name": "notes"])
        let path = try await Self.document(in: agent)
        let refused = try await Self.share(apps, "notes", path, with: "com.example.viewer")
        #expect(varlinkError(refused) == "io.cordon.App.Denied", "sending to an app outside allowedTargets: \(refused)")
        #expect(varlinkParameters(refused)["action"] as? String == "document.send")
        let rules = varlinkParameters(refused)["rules"] as? [String] ?? []
        #expect(rules.contains { $0.contains("documents.json#/overrides/1/documents") }, "\(rules)")
        // The viewer may send (sendTo any) and notes may receive (receiveFrom any).
        let back = try await Self.share(apps, "viewer", path, with: "com.example.notes")
        #expect(varlinkError(back) == nil, "\(back)")
        try await apps.register("mail", appId: "com.example.mail")
        let received = try await Self.share(apps, "mail", path, with: "com.example.viewer")
        #expect(varlinkError(received) == "io.cordon.App.Denied", "the viewer receives from no one: \(received)")
        #expect(varlinkParameters(received)["action"] as? String == "document.receive")
        let audit = try await agent.audit()
        #expect(
            audit.filter { $0["outcome"] as? String == "deny" }.compactMap { $0["action"] as? String } == [
                "document.send", "document.receive",
            ], "\(audit)")
        #expect(agent.terminate() == 0)
    }

    @Test func saveWritesOnlyWhereThePolicyAllows() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let allowed = root.appending("allowed")
        let elsewhere = root.appending("elsewhere")
        for directory in [allowed, elsewhere] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try await NobodyAgent.run(["/bin/chown", "\(UserAgent.uid):\(TestUser.gid)", directory])
        }
        let policy = #"{"schema": "cordon.policy.v1", "documents": {"saveLocations": ["\#(allowed)/**"]}}"#
        let (agent, apps) = try await Self.start(policy: policy)
        defer {
            apps.stop()
            agent.cleanUp()
        }
        // Through CordonKit's save (the notes example, run as the user).
        let saving = try await agent.startNotes(appId: "com.example.saver", arguments: ["--export-dir", allowed])
        try await eventually("the save inside went through") { saving.read().contains("saved note #5 to") }
        let inside = allowed + "/note-5.txt"
        #expect(saving.read().contains("saved note #5 to \(inside)"), "\(saving.read())")
        // The note's own text (its number counts the writer's ticks, not the notes stored).
        let saved = try String(contentsOfFile: inside, encoding: .utf8)
        #expect(saved.wholeMatch(of: /note \d+ at .+/) != nil, "\(saved)")
        let mode = try FileManager.default.attributesOfItem(atPath: inside)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let leaking = try await agent.startNotes(appId: "com.example.leaker", arguments: ["--export-dir", elsewhere])
        try await eventually("the save outside was refused") { leaking.read().contains("saving refused by the policy") }
        #expect(!leaking.read().contains("saved note"), "saving outside saveLocations was allowed")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
        // The decision the save was refused on (what CordonKit throws as `CordonError.denied`).
        let decision =
            varlinkParameters(
                try await apps.call(
                    "notes", "io.cordon.App.Check", ["action": "document.save", "target": elsewhere + "/note-5.txt"])
            )["decision"] as? [String: Any] ?? [:]
        #expect(decision["allowed"] as? Bool == false, "\(decision)")
        #expect(decision["action"] as? String == "document.save", "\(decision)")
        let rules = decision["rules"] as? [String] ?? []
        #expect(rules.contains { $0.contains("/documents/saveLocations") }, "\(rules)")
        #expect(agent.terminate() == 0)
    }
}
