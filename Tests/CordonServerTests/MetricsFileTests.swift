import Foundation
import Testing

@testable import CordonServer

/// The metrics file is written whole and 0644, never through a link, and only into a directory no
/// one else can write (the ordinary user's side: `AgentMetricsFileTests` in EndToEndTests).
@Suite struct MetricsFileTests {
    static func directory(mode: Int = 0o755) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("metrics-\(UUID())").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    @Test func aFileIsReplacedWholeWithMode0644() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = try MetricsFile(path: directory + "/agent.prom")
        try file.write(Array("a 1\n".utf8))
        try file.write(Array("a 2\n".utf8))
        #expect(try String(contentsOfFile: file.path, encoding: .utf8) == "a 2\n")
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o644)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["agent.prom"])
    }

    @Test func aLinkAtTheNameIsNotFollowed() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "victim\n".write(toFile: directory + "/victim", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: directory + "/agent.prom", withDestinationPath: "victim")
        let file = try MetricsFile(path: directory + "/agent.prom")
        #expect(throws: MetricsFile.Refusal.self) { try file.write(Array("a 1\n".utf8)) }
        #expect(try String(contentsOfFile: directory + "/victim", encoding: .utf8) == "victim\n")
    }

    @Test func aDirectoryOthersCanWriteOrALinkedDirectoryIsRefused() throws {
        let shared = try Self.directory(mode: 0o777)
        defer { try? FileManager.default.removeItem(atPath: shared) }
        #expect(throws: MetricsFile.Refusal.self) { try MetricsFile(path: shared + "/agent.prom").check() }
        let real = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: real) }
        let link = real + "-link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
        defer { try? FileManager.default.removeItem(atPath: link) }
        #expect(throws: MetricsFile.Refusal.self) { try MetricsFile(path: link + "/agent.prom").check() }
    }

    @Test(arguments: ["agent.prom", "/tmp/agent.txt", "/tmp/"])
    func aPathMustBeAnAbsolutePromFile(_ path: String) {
        #expect(throws: MetricsFile.Refusal.self) { try MetricsFile(path: path) }
    }
}
