import CordonKit
import CordonProtocol
import Foundation
import Testing

@Suite("Varlink protocol robustness", .timeLimit(.minutes(2)))
struct ProtocolRobustnessTests {
    private static let getStatus = #"{"method":"io.cordon.Agent.GetStatus"}"#

    @Test func garbageGetsInvalidMessageThenEOF() async throws {
        try await withTestAgent { agent in
            let raw = try agent.raw()
            try raw.send(bytes: Array("hello, agent".utf8) + [0xFF, 0xFE, 0])
            let reply = try raw.readReply()
            #expect(reply.error == "io.cordon.Agent.InvalidMessage", "\(reply.text)")
            #expect(reply["reason"]?.stringValue != nil)
            #expect(try raw.readsEOF())
        }
    }

    @Test func callWithoutMethodGetsInvalidMessageThenEOF() async throws {
        try await withTestAgent { agent in
            let raw = try agent.raw()
            let reply = try raw.call(#"{"parameters":{}}"#)
            #expect(reply.error == "io.cordon.Agent.InvalidMessage", "\(reply.text)")
            #expect(try raw.readsEOF())
        }
    }

    @Test func oversizedMessageGetsMessageTooLargeThenEOF() async throws {
        var limits = ConnectionLimits.standard
        limits.maxMessageBytes = 1024
        try await withTestAgent(limits: limits) { agent in
            let raw = try agent.raw()
            // A valid call, except for its size.
            let padding = String(repeating: "x", count: 2048)
            let reply = try raw.call(#"{"method":"io.cordon.Agent.GetStatus","parameters":{"pad":"\#(padding)"}}"#)
            #expect(reply.error == "io.cordon.Agent.MessageTooLarge", "\(reply.text)")
            #expect(reply["limit"]?.intValue == 1024)
            #expect(try raw.readsEOF())
        }
    }

    @Test func oversizedMessageWithoutTerminatorIsRefusedToo() async throws {
        var limits = ConnectionLimits.standard
        limits.maxMessageBytes = 1024
        try await withTestAgent(limits: limits) { agent in
            let raw = try agent.raw()
            try raw.send(bytes: Array(repeating: UInt8(ascii: "{"), count: 1500))
            let reply = try raw.readReply()
            #expect(reply.error == "io.cordon.Agent.MessageTooLarge", "\(reply.text)")
            #expect(try raw.readsEOF())
        }
    }

    @Test func messageAtTheLimitIsAccepted() async throws {
        var limits = ConnectionLimits.standard
        limits.maxMessageBytes = 1024
        try await withTestAgent(limits: limits) { agent in
            let raw = try agent.raw()
            let prefix = #"{"method":"io.cordon.Agent.GetStatus","parameters":{"pad":""#
            let suffix = #""}}"#
            let padding = String(repeating: "x", count: 1024 - prefix.utf8.count - suffix.utf8.count)
            let message = prefix + padding + suffix
            #expect(message.utf8.count == 1024)
            let reply = try raw.call(message)
            #expect(reply.error == nil, "\(reply.text)")
            #expect(reply["status"]?["state"]?.stringValue == "uninitialized")
        }
    }

    @Test func unknownMethodAndInterface() async throws {
        try await withTestAgent { agent in
            let raw = try agent.raw()
            let method = try raw.call(#"{"method":"io.cordon.Agent.Frobnicate"}"#)
            #expect(method.error == "org.varlink.service.MethodNotFound", "\(method.text)")
            #expect(method["method"]?.stringValue == "io.cordon.Agent.Frobnicate")
            let interface = try raw.call(#"{"method":"com.example.Nothing.Do"}"#)
            #expect(interface.error == "org.varlink.service.InterfaceNotFound", "\(interface.text)")
            #expect(interface["interface"]?.stringValue == "com.example.Nothing")
            let description = try raw.call(
                #"{"method":"org.varlink.service.GetInterfaceDescription","parameters":{"interface":"com.example.Nothing"}}"#
            )
            #expect(description.error == "org.varlink.service.InterfaceNotFound", "\(description.text)")
            let upgrade = try raw.call(#"{"method":"io.cordon.Agent.GetStatus","upgrade":true}"#)
            #expect(upgrade.error == "org.varlink.service.MethodNotImplemented", "\(upgrade.text)")
            // None of these closes the connection.
            #expect(try raw.call(Self.getStatus).error == nil)
        }
    }

    @Test func wrongParameterTypeNamesTheParameter() async throws {
        try await withTestAgent { agent in
            let raw = try agent.raw()
            let reply = try raw.call(#"{"method":"io.cordon.Agent.Unlock","parameters":{"passcode":5}}"#)
            #expect(reply.error == "org.varlink.service.InvalidParameter", "\(reply.text)")
            #expect(reply["parameter"]?.stringValue == "passcode")
            let missing = try raw.call(#"{"method":"io.cordon.Agent.Initialize","parameters":{}}"#)
            #expect(missing.error == "org.varlink.service.InvalidParameter", "\(missing.text)")
            #expect(missing["parameter"]?.stringValue == "passcode")
            let unconfirmed = try raw.call(#"{"method":"io.cordon.Agent.Wipe","parameters":{"confirm":false}}"#)
            #expect(unconfirmed.error == "org.varlink.service.InvalidParameter", "\(unconfirmed.text)")
            #expect(unconfirmed["parameter"]?.stringValue == "confirm")
            // The connection stays usable.
            let status = try raw.call(Self.getStatus)
            #expect(status.error == nil, "\(status.text)")
            #expect(status["status"]?["state"]?.stringValue == "uninitialized")
        }
    }

    @Test func subscribeWithoutMoreIsRefused() async throws {
        try await withTestAgent { agent in
            let raw = try agent.raw()
            let reply = try raw.call(#"{"method":"io.cordon.App.Subscribe","parameters":{}}"#)
            #expect(reply.error == "org.varlink.service.ExpectedMore", "\(reply.text)")
            #expect(try raw.call(Self.getStatus).error == nil)
        }
    }

    @Test func subscribeWithMoreStreams() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            let raw = try agent.raw()
            let snapshot = try raw.call(#"{"method":"io.cordon.App.Subscribe","more":true,"parameters":{}}"#)
            #expect(snapshot.error == nil, "\(snapshot.text)")
            #expect(snapshot.continues)
            #expect(snapshot["event"]?["kind"]?.stringValue == "State")
            try await client.unlock(passcode: "1234")
            let available = try raw.readReply()
            #expect(available.continues)
            #expect(available["event"]?["kind"]?.stringValue == "EncryptionKeyAvailable")
            #expect(available["event"]?["seq"]?.intValue == 1)
            let unlocked = try raw.readReply()
            #expect(unlocked["event"]?["kind"]?.stringValue == "DidUnlock")
            #expect(unlocked["event"]?["seq"]?.intValue == 2)
            await client.close()
        }
    }

    @Test func onewayCallsAreNotAnsweredButTakeEffect() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            try await client.unlock(passcode: "1234")
            let raw = try agent.raw()
            try raw.send(#"{"method":"io.cordon.Agent.Lock","oneway":true}"#)
            // The first reply read is GetStatus's: Lock sent none.
            let status = try raw.call(Self.getStatus)
            #expect(status.error == nil, "\(status.text)")
            #expect(status["status"]?["state"]?.stringValue == "lockedKeyHeld")
            #expect(try await client.status().state == .lockedKeyHeld)
            // An error is not sent for a oneway call either.
            try raw.send(#"{"method":"io.cordon.Agent.Frobnicate","oneway":true}"#)
            let again = try raw.call(Self.getStatus)
            #expect(again["status"] != nil, "\(again.text)")
            await client.close()
        }
    }

    @Test func pipelinedCallsAreAnsweredInOrder() async throws {
        try await withTestAgent { agent in
            let raw = try agent.raw()
            let calls = [
                #"{"method":"org.varlink.service.GetInfo"}"#,
                #"{"method":"io.cordon.Agent.Frobnicate"}"#,
                #"{"method":"io.cordon.Agent.Initialize","parameters":{"passcode":"1234"}}"#,
                Self.getStatus,
            ]
            try raw.send(bytes: calls.flatMap { Array($0.utf8) + [0] })
            let info = try raw.readReply()
            #expect(info["interfaces"] != nil, "\(info.text)")
            let unknown = try raw.readReply()
            #expect(unknown.error == "org.varlink.service.MethodNotFound", "\(unknown.text)")
            // Initialize is answered later (off the loop); the status after it must wait for it.
            let initialized = try raw.readReply()
            #expect(initialized.error == nil, "\(initialized.text)")
            // Its reply holds only the recovery key.
            #expect(initialized["recoveryKey"]?.stringValue?.count == 55, "\(initialized.text)")
            let status = try raw.readReply()
            #expect(status["status"]?["state"]?.stringValue == "lockedNoKey", "\(status.text)")
        }
    }

    /// More replies than the socket holds while the client reads none: the first go straight to
    /// the socket, the rest wait in NIO behind what a `send` left, and then go straight again once
    /// NIO has written them. The client reads every reply whole and in order.
    @Test func repliesBeyondTheSocketsRoomArriveWholeAndInOrder() async throws {
        try await withTestAgent { agent in
            let raw = try agent.raw()
            // io.cordon.App's description is about 6.5 KB: 48 of them are more than a Unix socket
            // holds (212,992 bytes by default), and 60 calls fit the backlog of one read.
            let describe =
                #"{"method":"org.varlink.service.GetInterfaceDescription","parameters":{"interface":"io.cordon.App"}}"#
            let calls = (0..<60).map { $0 % 5 == 4 ? Self.getStatus : describe }
            try raw.send(bytes: calls.flatMap { Array($0.utf8) + [0] })
            for (index, call) in calls.enumerated() {
                let reply = try raw.readReply()
                let key = call == describe ? "description" : "status"
                #expect(reply.error == nil && reply[key] != nil, "reply \(index): \(reply.text.prefix(160))")
            }
            // And the connection still answers straight away.
            #expect(try raw.call(Self.getStatus)["status"] != nil)
        }
    }

    @Test func callSplitAcrossWritesIsReassembled() async throws {
        try await withTestAgent { agent in
            let raw = try agent.raw()
            let bytes = Array(Self.getStatus.utf8) + [0]
            for byte in bytes { try raw.send(bytes: [byte]) }
            #expect(try raw.readReply()["status"] != nil)
        }
    }

    @Test func serviceDescribesItsInterfaces() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            let info = try await client.serviceInfo()
            #expect(
                info.interfaces == [
                    "org.varlink.service", "io.cordon.Agent", "io.cordon.App", "io.cordon.Pasteboard",
                    "io.cordon.Policy", "io.cordon.Audit", "io.cordon.Posture", "io.cordon.Storage",
                    "io.cordon.Tokens", "io.cordon.Identity",
                ])
            #expect(info.product == "cordond")
            let raw = try agent.raw()
            for name in info.interfaces {
                let reply = try raw.call(
                    #"{"method":"org.varlink.service.GetInterfaceDescription","parameters":{"interface":"\#(name)"}}"#)
                let description = try #require(reply["description"]?.stringValue, "\(reply.text)")
                #expect(description.contains("interface \(name)\n"))
                #expect(description == InterfaceDescriptions.all[name])
            }
            await client.close()
        }
    }

    @Test func garbageClientsDoNotDisturbOthers() async throws {
        try await withTestAgent { agent in
            let client = try await agent.client()
            try await client.initialize(passcode: "1234")
            let socketPath = agent.socketPath
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for round in 0..<50 {
                        let raw = try RawSocket(path: socketPath)
                        try raw.send(bytes: Array("garbage \(round) {{{".utf8) + [0, 1, 2, 0])
                        let reply = try raw.readReply()
                        #expect(reply.error == "io.cordon.Agent.InvalidMessage")
                        #expect(try raw.readsEOF())
                    }
                }
                group.addTask {
                    for _ in 0..<50 {
                        let raw = try RawSocket(path: socketPath)
                        try raw.send(bytes: Array(repeating: 0x7B, count: 70_000))
                        let reply = try raw.readReply()
                        #expect(reply.error == "io.cordon.Agent.MessageTooLarge")
                        #expect(try raw.readsEOF())
                    }
                }
                group.addTask {
                    for _ in 0..<200 {
                        #expect(try await client.status().state == .lockedNoKey)
                    }
                    try await client.unlock(passcode: "1234")
                    #expect(try await client.status().state == .unlocked)
                }
                try await group.waitForAll()
            }
            await client.close()
        }
    }
}
