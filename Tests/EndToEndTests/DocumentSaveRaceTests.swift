import CordonProtocol
import Foundation
import Testing

@testable import CordonKit

/// A same-user program racing an app's save: between the agent's decision and the write it swaps
/// a symlink in for the decided directory or the file name (docs/THREAT-MODEL.md, "Documents").
@Suite struct DocumentSaveRaceTests {
    /// A daemon under `policy` (admin), with the test binary registered and subscribed as the
    /// viewer. Root in test mode: the race is driven from inside the SDK's save (`afterDecision`),
    /// which only an app in the test process can do.
    static func start(policy: String) async throws -> (DaemonProcess, CordonApp) {
        let root = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: root.appending("admin"), withIntermediateDirectories: true)
        try policy.write(toFile: root.appending("admin/documents.json"), atomically: true, encoding: .utf8)
        let daemon = try await DaemonProcess.started(root: root)
        let viewer = try await CordonApp.connect(appId: "com.example.viewer", socketPath: daemon.socketPath)
        return (daemon, viewer)
    }

    @Test func aDirectorySwappedForALinkAfterTheDecisionIsNotFollowed() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let work = root.appending("Documents/Work")
        let outside = root.appending("outside")
        try FileManager.default.createDirectory(atPath: work + "/reports", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let policy = #"{"schema": "cordon.policy.v1", "documents": {"saveLocations": ["\#(work)/**"]}}"#
        let (daemon, viewer) = try await Self.start(policy: policy)
        defer { daemon.cleanUp() }
        let reports = work + "/reports"
        do {
            try await viewer.save(Data("q3".utf8), to: reports + "/q3.txt", contentType: nil) {
                // The attacker moves the decided directory away and links the path outside.
                try FileManager.default.moveItem(atPath: reports, toPath: work + "/moved")
                try FileManager.default.createSymbolicLink(atPath: reports, withDestinationPath: outside)
            }
            Issue.record("the save went ahead after its directory was swapped")
        } catch CordonError.denied(let action, let reason, _) {
            #expect(action == "document.save")
            #expect(reason == "\(reports) was moved after the decision; nothing was written")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: work + "/moved").isEmpty)
        await viewer.close()
        try await daemon.stop()
    }

    @Test func aFileNameSwappedForALinkIsReplacedNotFollowed() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let work = root.appending("Documents/Work")
        let outside = root.appending("outside")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try "original".write(toFile: outside + "/target.txt", atomically: true, encoding: .utf8)
        let policy = #"{"schema": "cordon.policy.v1", "documents": {"saveLocations": ["\#(work)/**"]}}"#
        let (daemon, viewer) = try await Self.start(policy: policy)
        defer { daemon.cleanUp() }
        try await viewer.save(Data("q3".utf8), to: work + "/q3.txt", contentType: nil) {
            try FileManager.default.createSymbolicLink(
                atPath: work + "/q3.txt", withDestinationPath: outside + "/target.txt")
        }
        #expect(try String(contentsOfFile: outside + "/target.txt", encoding: .utf8) == "original")
        let saved = try FileManager.default.attributesOfItem(atPath: work + "/q3.txt")
        #expect(saved[.type] as? FileAttributeType == .typeRegular)
        #expect(saved[.posixPermissions] as? Int == 0o600)
        #expect(try String(contentsOfFile: work + "/q3.txt", encoding: .utf8) == "q3")
        await viewer.close()
        try await daemon.stop()
    }
}
