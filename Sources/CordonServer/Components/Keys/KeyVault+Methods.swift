import CordonLifecycle
import CordonProtocol
import CordonSecrets
import NIOCore

/// The `io.cordon.Agent` methods that open, create, re-seal or erase the key; each check runs
/// through the lifecycle machine, which counts the attempt (docs/ARCHITECTURE.md, "Keys").
extension KeyVault {
    /// `Initialize`: creates the master key under a passcode the rules accept.
    func serveInitialize(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let parameters = try call.parameters(InitializeParameters.self)
        if let problem = passcodeRules.problem(with: parameters.passcode) {
            throw CordonError.invalidPasscode(reason: problem).varlinkError
        }
        let input = LifecycleInput.initializeRequested(passcodeLength: parameters.passcode.count, now: host.clock())
        return host.request(input, call.encoder) { $0.passcode = parameters.passcode }
    }

    /// `Unlock`: with the passcode, or without it within the re-authentication grace.
    func serveUnlock(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let parameters = try call.parameters(UnlockParameters.self)
        // Without the passcode (the re-authentication grace), only a verified managed app may
        // unlock: any other client must give the passcode (docs/THREAT-MODEL.md).
        if parameters.passcode == nil {
            do throws(CordonError) {
                _ = try host.verifiedRegistration(call.connection, for: .activity)
            } catch {
                throw CordonError.passcodeRequired.varlinkError
            }
        }
        let now = host.clock()
        host.run(.activity(now: now))
        return host.request(.unlockRequested(hasPasscode: parameters.passcode != nil, now: now), call.encoder) {
            $0.passcode = parameters.passcode
        }
    }

    /// `ChangePasscode`: re-seals the key under a new passcode the rules accept.
    func serveChangePasscode(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let parameters = try call.parameters(ChangePasscodeParameters.self)
        if let problem = passcodeRules.problem(with: parameters.new) {
            throw CordonError.invalidPasscode(reason: problem).varlinkError
        }
        let input = LifecycleInput.changePasscodeRequested(newPasscodeLength: parameters.new.count, now: host.clock())
        return host.request(input, call.encoder) {
            $0.passcode = parameters.old
            $0.newPasscode = parameters.new
        }
    }

    /// `Wipe`: crypto-erases the container once confirmed (with the passcode, unless locked out).
    func serveWipe(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        let parameters = try call.parameters(WipeParameters.self)
        guard parameters.confirm else { throw .invalidParameter("confirm") }
        let input = LifecycleInput.wipeRequested(hasPasscode: parameters.passcode != nil, now: host.clock())
        return host.request(input, call.encoder) { $0.passcode = parameters.passcode }
    }

    /// `Recover`: restores access with the recovery key (`KeyVault+Recovery.swift`).
    func serveRecover(_ call: ComponentCall) throws(VarlinkError) -> CallOutcome {
        try recover(try call.parameters(RecoverParameters.self), encoder: call.encoder, now: host.clock())
    }
}
