import CordonFleetd
import Foundation
import Testing

/// fleet.json's `metrics` member: absent is off, a loopback address is taken, anything else is
/// refused naming `/metrics/listen`; and `/push`'s reconnect window.
@Suite struct FleetdConfigurationTests {
    static func load(_ metrics: String?, push: String? = nil) throws(FleetdError) -> FleetdConfiguration {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(UUID()).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let member = (metrics.map { #", "metrics": \#($0)"# } ?? "") + (push.map { #", "push": \#($0)"# } ?? "")
        _ = FileManager.default.createFile(
            atPath: path, contents: Data(#"{"repository": "https://fleet.example.com/"\#(member)}"#.utf8))
        return try FleetdConfiguration.load(path)
    }

    @Test func absentIsOff() throws {
        #expect(try Self.load(nil).metrics == nil)
    }

    @Test(arguments: [
        (#"{"listen": "127.0.0.1:9477"}"#, "127.0.0.1", 9477), (#"{"listen": "127.1.2.3:0"}"#, "127.1.2.3", 0),
        (#"{"listen": "[::1]:9477"}"#, "::1", 9477),
    ])
    func aLoopbackAddressIsTaken(_ member: String, _ host: String, _ port: Int) throws {
        let listen = try #require(try Self.load(member).metrics)
        #expect(listen.host == host && listen.port == port)
    }

    @Test(arguments: [
        #"{"listen": "0.0.0.0:9477"}"#, #"{"listen": "192.168.1.5:9477"}"#, #"{"listen": "localhost:9477"}"#,
        #"{"listen": "[::]:9477"}"#, #"{"listen": "127.0.0.1"}"#, #"{"listen": "127.0.0.1:70000"}"#,
        #"{"listen": 9477}"#, #"{}"#,
    ])
    func anythingElseIsRefusedNamingThePointer(_ member: String) {
        #expect {
            try Self.load(member)
        } throws: { error in
            (error as? FleetdError)?.message.contains("/metrics/listen must be a loopback address") == true
        }
    }

    @Test func anUnknownMemberIsNamed() {
        #expect {
            try Self.load(#"{"listen": "127.0.0.1:9477", "path": "/x"}"#)
        } throws: { error in
            (error as? FleetdError)?.message.contains("/metrics/path is not a setting") == true
        }
        #expect {
            try Self.load(#""127.0.0.1:9477""#)
        } throws: { error in
            (error as? FleetdError)?.message.contains("/metrics must be an object") == true
        }
    }

    /// `/push/reconnectWindowSeconds`: 10 unless set; a window that is no number of seconds in
    /// (0, 600] is refused naming the pointer.
    @Test func theReconnectWindowIsTenSecondsUnlessSet() throws {
        let servers = #""servers": ["nats://127.0.0.1:4222"]"#
        #expect(try Self.load(nil, push: "{\(servers)}").push?.reconnectWindowSeconds == 10)
        #expect(
            try Self.load(nil, push: #"{\#(servers), "reconnectWindowSeconds": 2.5}"#).push?.reconnectWindowSeconds
                == 2.5)
        for bad in ["0", "-1", "601", #""10""#] {
            #expect {
                try Self.load(nil, push: #"{\#(servers), "reconnectWindowSeconds": \#(bad)}"#)
            } throws: { error in
                (error as? FleetdError)?.message.contains("/push/reconnectWindowSeconds must be a number of seconds")
                    == true
            }
        }
        #expect {
            try Self.load(nil, push: #"{\#(servers), "reconnect": 1}"#)
        } throws: { error in
            (error as? FleetdError)?.message.contains("/push/reconnect is not a setting") == true
        }
    }
}
