import CordonKit
import CordonProtocol
import Foundation
import Testing

/// `cordon storage` and `cordon wipe --app` against the real daemon (docs/CLI.md).
@Suite struct StorageCLITests {
    func cordon(_ daemon: DaemonProcess, _ arguments: [String], input: String? = "2468\n") async throws
        -> CommandResult
    {
        try await runCommand(Binaries.cordon, ["--socket", daemon.socketPath] + arguments, input: input)
    }

    @Test func anAdministratorReadsWritesAndWipesOneAppsRecordsWithThePasscode() async throws {
        let daemon = try await DaemonProcess.started()
        defer { daemon.cleanUp() }
        let client = try await daemon.client()
        try await client.initialize(passcode: "2468")
        try await client.unlock(passcode: "2468")
        let mail = try await CordonApp.connect(appId: "com.example.mail", socketPath: daemon.socketPath)
        let mailStore = try SecureStore(app: mail, dataDirectory: daemon.root.appending("data"))
        try await mailStore.put("inbox", Data("mail's".utf8))
        let app = ["--app", "com.example.notes", "--passcode-stdin"]
        let put = try await cordon(daemon, ["storage", "put"] + app + ["draft", "hello from the CLI"])
        #expect(put.status == 0, "\(put.stderr)")
        let get = try await cordon(daemon, ["storage", "get"] + app + ["draft"])
        #expect(get.stdout == "hello from the CLI")
        #expect(try await cordon(daemon, ["storage", "ls"] + app).stdout == "draft\n")
        let usage = try await cordon(daemon, ["storage", "usage", "--json"], input: nil)
        #expect(usage.stdout.contains("com.example.notes") && usage.stdout.contains("com.example.mail"))
        let wrong = try await cordon(daemon, ["storage", "get"] + app + ["draft"], input: "0000\n")
        #expect(wrong.status != 0)
        let missing = try await cordon(daemon, ["storage", "get"] + app + ["nothing"])
        #expect(missing.stderr.contains("no record named \"nothing\"") && missing.stderr.contains("hint:"))
        let rm = try await cordon(daemon, ["storage", "rm"] + app + ["draft"])
        #expect(rm.stdout == "deleted draft\n")
        _ = try await cordon(daemon, ["storage", "put"] + app + ["again", "x"])
        let wipe = try await cordon(daemon, ["wipe", "--app", "com.example.notes", "--passcode-stdin"])
        #expect(wipe.status == 0, "\(wipe.stderr)")
        #expect(try await cordon(daemon, ["storage", "ls"] + app).stdout == "")
        #expect(try await mailStore.get("inbox") == Data("mail's".utf8), "the other app is untouched")
        let audit = try await client.audit(appId: "com.example.notes").compactMap(\.action)
        #expect(audit.contains("storage.get") && audit.contains("storage.put") && audit.contains("storage.wipe"))
        await mail.close()
        await client.close()
        try await daemon.stop()
    }
}
