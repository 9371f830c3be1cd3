import CordonProtocol
import Foundation
import Testing

@Suite("CordonError <-> varlink errors")
struct CordonErrorTests {
    @Test(arguments: everyCordonError)
    func roundTripsThroughVarlinkError(error: CordonError) {
        let varlink = error.varlinkError
        #expect(varlink.name == error.varlinkName)
        #expect(varlink.parameters == error.varlinkParameters)
        #expect(CordonError(varlink) == error)
    }

    @Test(arguments: everyCordonError)
    func roundTripsThroughTheWireBytes(error: CordonError) throws {
        let codec = VarlinkCodec()
        let data = codec.encodeError(error.varlinkError)
        let reply = try JSONDecoder().decode(VarlinkReply<[String: JSONValue]>.self, from: data)
        let name = try #require(reply.error)
        #expect(CordonError(VarlinkError(name: name, parameters: reply.parameters ?? [:])) == error)
    }

    @Test func wholeSecondDelaysSurviveTheWire() throws {
        // 4.0 may travel as the JSON number 4 and decode as an int: it must still be a delay.
        for error in [
            CordonError.wrongPasscode(attemptsLeft: 2, retryAfterSeconds: 4), .retryLater(retryAfterSeconds: 300),
            .wrongPasscode(attemptsLeft: 0, retryAfterSeconds: 0),
        ] {
            let data = VarlinkCodec().encodeError(error.varlinkError)
            let reply = try JSONDecoder().decode(VarlinkReply<[String: JSONValue]>.self, from: data)
            #expect(CordonError(VarlinkError(name: reply.error ?? "", parameters: reply.parameters ?? [:])) == error)
        }
    }

    /// Fails to compile when a case is added, so `everyCordonError` stays complete.
    private func caseNumber(_ error: CordonError) -> Int {
        switch error {
        case .notInitialized: 0
        case .alreadyInitialized: 1
        case .wrongPasscode: 2
        case .retryLater: 3
        case .passcodeRequired: 4
        case .invalidPasscode: 5
        case .locked: 6
        case .busy: 7
        case .notRegistered: 8
        case .alreadyRegistered: 9
        case .invalidAppId: 10
        case .keyUnavailable: 11
        case .notManaged: 12
        case .subscriberTooSlow: 13
        case .invalidToken: 14
        case .unknownSequence: 15
        case .internalError: 16
        case .revoked: 17
        case .unknownAction: 18
        case .refused: 19
        case .unlockUnavailable: 20
        case .unlockCancelled: 21
        case .unlockTimedOut: 22
        case .denied: 23
        case .targetNotRunning: 24
        case .pasteboardEmpty: 25
        case .contentTooLarge: 26
        case .invalidProcess: 27
        case .processChanged: 28
        case .registeredOnBehalf: 29
        case .appIdInUse: 30
        case .tooManyConnections: 31
        case .tooManyProcessConnections: 32
        case .connectionIdle: 33
        // MARK: Storage (#13)
        case .containerLocked: 34
        case .recordNotFound: 35
        case .valueTooLarge: 36
        case .invalidRecordName: 37
        case .recordTampered: 38
        case .storageFailed: 39
        // MARK: Tokens (#14)
        case .duplicateToken: 40
        case .tokenNotFound: 41
        case .tokenExpired: 42
        case .tokenBoundElsewhere: 43
        case .tokenFormat: 44
        case .tokenLimit: 45
        case .pinRequired: 46
        case .tokenKindNotAllowed: 47
        case .notCodeReader: 48
        case .tokensLocked: 49
        // MARK: TPM passcode sealing (#12)
        case .hardwareRequired: 50
        case .hardwareLockedOut: 51
        case .hardwareKeyRejected: 52
        case .hardwareUnavailable: 53
        case .invalidRecoveryKey: 54
        // MARK: CT-KIP (#14)
        case .ctkipFailed: 55
        case .ctkipInsecureNotAllowed: 56
        // MARK: Fingerprint unlock (#15)
        case .biometricsDisabled: 57
        case .biometricsNotEnabled: 58
        case .biometricsPasscodeNeeded: 59
        case .biometricsUnavailable: 60
        // MARK: Posture (#16)
        case .postureRefused: 61
        case .invalidNonce: 62
        // MARK: Identity broker (#15)
        case .identityUnknownDomain: 63
        case .identityUnknownProvider: 64
        case .identityNotInAccessGroup: 65
        case .identityLocked: 66
        case .signInCancelled: 67
        case .signInExpired: 68
        case .signInFailed: 69
        case .sessionExpired: 70
        case .processNotHardened: 71
        case .foreignSender: 72
        // MARK: State the user cannot roll back (#27)
        case .stateRolledBack: 73
        // MARK: Pinned channel (#32)
        case .invalidClientCertificate: 74
        }
    }

    @Test func theFixtureCoversEveryCase() {
        #expect(Set(everyCordonError.map(caseNumber)) == Set(0...74))
    }

    @Test func namesAreUniqueAndBelongToTheirInterface() {
        let names = everyCordonError.map(\.varlinkName)
        #expect(Set(names).count == names.count)
        let agent: Set<String> = [
            "NotInitialized", "AlreadyInitialized", "WrongPasscode", "RetryLater", "PasscodeRequired",
            "InvalidPasscode", "Locked", "Busy", "InternalError", "Revoked", "TooManyConnections",
            "TooManyProcessConnections", "ConnectionIdle", "ForeignSender",
            // MARK: TPM passcode sealing (#12)
            "HardwareRequired", "HardwareLockedOut", "HardwareKeyRejected", "HardwareUnavailable",
            "InvalidRecoveryKey", "StateRolledBack",
            // MARK: Fingerprint unlock (#15)
            "BiometricsDisabled", "BiometricsNotEnabled", "BiometricsPasscodeNeeded", "BiometricsUnavailable",
        ]
        for name in names {
            let member = String(name.split(separator: ".").last ?? "")
            let pasteboard: Set<String> = ["Empty", "ContentTooLarge"]
            let tokens: Set<String> = [
                "DuplicateToken", "TokenNotFound", "TokenExpired", "TokenBoundElsewhere", "TokenFormat", "TokenLimit",
                "PinRequired", "KindNotAllowed", "NotCodeReader", "Locked",
                // MARK: CT-KIP (#14)
                "CTKIPFailed", "CTKIPInsecureNotAllowed",
            ]
            let posture: Set<String> = ["InvalidNonce"]
            let storage: Set<String> = [
                "ContainerLocked", "NotFound", "ValueTooLarge", "InvalidName", "Tampered", "StorageFailed",
            ]
            let interface =
                agent.contains(member)
                ? "io.cordon.Agent."
                : pasteboard.contains(member)
                    ? "io.cordon.Pasteboard." : storage.contains(member) ? "io.cordon.Storage." : "io.cordon.App."
            let identity: Set<String> = [
                "UnknownDomain", "UnknownProvider", "NotInAccessGroup", "Locked", "SignInCancelled", "SignInExpired",
                "SignInFailed", "SessionExpired",
            ]
            #expect(
                name == interface + member || name == "io.cordon.Tokens." + member && tokens.contains(member)
                    || name == "io.cordon.Identity." + member && identity.contains(member)
                    || name == "io.cordon.Posture." + member && posture.contains(member))
        }
    }

    @Test func exactNamesAndParameters() {
        #expect(CordonError.notInitialized.varlinkError == VarlinkError(name: "io.cordon.Agent.NotInitialized"))
        #expect(
            CordonError.wrongPasscode(attemptsLeft: 7, retryAfterSeconds: 2.5).varlinkError
                == VarlinkError(
                    name: "io.cordon.Agent.WrongPasscode",
                    parameters: ["attemptsLeft": .int(7), "retryAfterSeconds": .double(2.5)]))
        #expect(
            CordonError.retryLater(retryAfterSeconds: 3).varlinkParameters == ["retryAfterSeconds": .double(3)])
        #expect(CordonError.invalidPasscode(reason: "short").varlinkParameters == ["reason": .string("short")])
        #expect(
            CordonError.invalidAppId(appId: "x y", reason: "space").varlinkParameters
                == ["appId": .string("x y"), "reason": .string("space")])
        #expect(CordonError.keyUnavailable(state: "lockedNoKey").varlinkName == "io.cordon.App.KeyUnavailable")
        #expect(CordonError.subscriberTooSlow(limit: 256).varlinkParameters == ["limit": .int(256)])
        #expect(CordonError.unknownSequence(seq: 42).varlinkParameters == ["seq": .int(42)])
        #expect(CordonError.invalidToken.varlinkParameters.isEmpty)
        #expect(CordonError.internalError(reason: "db").varlinkName == "io.cordon.Agent.InternalError")
    }

    @Test(arguments: [
        "org.varlink.service.MethodNotFound", "io.cordon.Agent.InvalidMessage", "io.cordon.Agent.MessageTooLarge",
        "io.cordon.Agent.Nope", "io.cordon.agent.Locked", "Locked", "",
    ])
    func namesCordonDoesNotDefineDecodeAsNil(name: String) {
        #expect(CordonError(VarlinkError(name: name)) == nil)
    }

    @Test func missingParametersDecodeToDefaults() {
        #expect(
            CordonError(VarlinkError(name: "io.cordon.Agent.WrongPasscode"))
                == .wrongPasscode(attemptsLeft: 0, retryAfterSeconds: 0))
        #expect(CordonError(VarlinkError(name: "io.cordon.Agent.RetryLater")) == .retryLater(retryAfterSeconds: 0))
        #expect(CordonError(VarlinkError(name: "io.cordon.App.AlreadyRegistered")) == .alreadyRegistered(appId: ""))
        #expect(
            CordonError(VarlinkError(name: "io.cordon.App.InvalidAppId")) == .invalidAppId(appId: "", reason: ""))
        #expect(CordonError(VarlinkError(name: "io.cordon.App.UnknownSequence")) == .unknownSequence(seq: 0))
        #expect(CordonError(VarlinkError(name: "io.cordon.App.SubscriberTooSlow")) == .subscriberTooSlow(limit: 0))
    }

    @Test func looselyTypedParametersAreAccepted() {
        // Other varlink clients may send 3.0 for an int and 2 for a float.
        let wrong = VarlinkError(
            name: "io.cordon.Agent.WrongPasscode",
            parameters: ["attemptsLeft": .double(3), "retryAfterSeconds": .int(2)])
        #expect(CordonError(wrong) == .wrongPasscode(attemptsLeft: 3, retryAfterSeconds: 2))
        let seq = VarlinkError(name: "io.cordon.App.UnknownSequence", parameters: ["seq": .double(5.5)])
        #expect(CordonError(seq) == .unknownSequence(seq: 0), "a fractional seq is not a seq")
        let state = VarlinkError(name: "io.cordon.App.KeyUnavailable", parameters: ["state": .int(1)])
        #expect(CordonError(state) == .keyUnavailable(state: ""))
    }

    @Test func extraParametersAreIgnored() {
        let error = VarlinkError(name: "io.cordon.Agent.Locked", parameters: ["since": .double(12)])
        #expect(CordonError(error) == .locked)
    }
}

@Suite("VarlinkError")
struct VarlinkErrorTests {
    @Test func standardErrorsUseTheServiceInterface() {
        #expect(
            VarlinkError.interfaceNotFound("io.x")
                == VarlinkError(
                    name: "org.varlink.service.InterfaceNotFound", parameters: ["interface": .string("io.x")]))
        #expect(
            VarlinkError.methodNotFound("io.x.Y")
                == VarlinkError(name: "org.varlink.service.MethodNotFound", parameters: ["method": .string("io.x.Y")]))
        #expect(
            VarlinkError.methodNotImplemented("io.x.Y")
                == VarlinkError(
                    name: "org.varlink.service.MethodNotImplemented", parameters: ["method": .string("io.x.Y")]))
        #expect(
            VarlinkError.invalidParameter("passcode")
                == VarlinkError(
                    name: "org.varlink.service.InvalidParameter", parameters: ["parameter": .string("passcode")]))
        #expect(VarlinkError.permissionDenied == VarlinkError(name: "org.varlink.service.PermissionDenied"))
        #expect(VarlinkError.expectedMore == VarlinkError(name: "org.varlink.service.ExpectedMore"))
    }

    @Test func agentConnectionErrors() {
        #expect(
            VarlinkError.invalidMessage(reason: "r")
                == VarlinkError(name: "io.cordon.Agent.InvalidMessage", parameters: ["reason": .string("r")]))
        #expect(
            VarlinkError.messageTooLarge(limit: 65536)
                == VarlinkError(name: "io.cordon.Agent.MessageTooLarge", parameters: ["limit": .int(65536)]))
        #expect(
            CordonError.tooManyConnections(limit: 4096).varlinkError
                == VarlinkError(name: "io.cordon.Agent.TooManyConnections", parameters: ["limit": .int(4096)]))
        #expect(
            CordonError.tooManyProcessConnections(pid: 42, limit: 64).varlinkError
                == VarlinkError(
                    name: "io.cordon.Agent.TooManyProcessConnections", parameters: ["pid": .int(42), "limit": .int(64)]
                ))
        #expect(
            CordonError.connectionIdle(seconds: 900).varlinkError
                == VarlinkError(name: "io.cordon.Agent.ConnectionIdle", parameters: ["seconds": .double(900)]))
    }

    @Test func defaultParametersAreEmpty() {
        #expect(VarlinkError(name: "x.Y").parameters.isEmpty)
    }

    @Test func connectionLimitDefaults() {
        #expect(
            ConnectionLimits.standard
                == ConnectionLimits(
                    maxMessageBytes: 65536, maxPendingCalls: 64, maxQueuedEvents: 256, maxConnectionsPerUID: 4096,
                    maxPendingBytes: 262_144, maxConnectionsPerProcess: 64, idleConnectionTimeout: .seconds(900)))
    }
}
