import CordonLifecycle
import CordonProtocol
import CordonSecrets
import Dispatch
import Foundation
import NIOCore

extension Agent {
    /// Stores the attempt counter, then (only if that worked) checks the passcode off the loop.
    func startCheck(_ work: LifecycleAction, count: Int, lastFailureAt: Double?, request: RequestContext?) {
        guard let request, let passcode = request.passcode, let wrapped = wrappedKey else {
            run(.checkAborted(now: clock()), request: nil)
            return
        }
        pending = PendingRequest(
            promise: request.promise, passcode: passcode, newPasscode: request.newPasscode, encoder: request.encoder)
        let rewrapTo = work == .rewrapMasterKey ? request.newPasscode : nil
        let database = self.database
        let custody = self.custody
        let job = storePool.runIfActive(eventLoop: loop) { () throws -> CheckResult in
            do {
                try database.saveAttempts(count: count, lastFailureAt: lastFailureAt)
            } catch {
                return .counterNotStored(String(describing: error))
            }
            let master: SecureBytes
            do {
                master = try custody.unwrap(wrapped, passcode: passcode)
            } catch {
                return .wrong
            }
            guard let rewrapTo else { return .correct(master, nil) }
            defer { master.zero() }
            var kdf = wrapped.kdf
            kdf.salt = custody.makeSalt()
            let rewrapped = try custody.wrap(master, passcode: rewrapTo, kdf: kdf)
            try database.saveWrappedKey(rewrapped, now: Date().timeIntervalSince1970)
            return .correct(nil, rewrapped)
        }
        job.assumeIsolated().whenComplete { [self] result in
            finishCheck(result, unlocking: work == .checkPasscode && machine.pending == .unlock)
        }
    }

    private func finishCheck(_ result: Result<CheckResult, any Error>, unlocking: Bool) {
        let now = clock()
        switch result {
        case .success(.counterNotStored(let reason)):
            logger.error("passcode check refused: the attempt counter could not be stored: \(reason)")
            run(.checkAborted(now: now))
        case .success(.wrong):
            logger.notice("wrong passcode", metadata: ["failedAttempts": "\(machine.failedAttempts)"])
            run(.passcodeChecked(correct: false, now: now))
        case .success(.correct(let key, let rewrapped)):
            if let rewrapped {
                wrappedKey = rewrapped
                logger.notice("passcode changed; the master key is re-wrapped")
            }
            // Installed only if the machine answers with `installKey`; zeroed otherwise.
            if let key {
                if unlocking && !isShuttingDown { candidateKey = key } else { key.zero() }
            }
            run(.passcodeChecked(correct: true, now: now))
        case .failure(let error):
            logger.error("passcode check failed: \(error)")
            run(.checkAborted(now: now))
        }
    }

    /// Creates the master key, tunes scrypt and stores the wrapped key, off the loop.
    func startCreate(request: RequestContext?) {
        guard let request, let passcode = request.passcode else {
            run(.initializeFinished(success: false, now: clock()))
            return
        }
        pending = PendingRequest(
            promise: request.promise, passcode: passcode, newPasscode: nil, encoder: request.encoder)
        let database = self.database
        let custody = self.custody
        let insecure = configuration.insecureFastKDF
        let tuner = KDFTuner(targetSeconds: configuration.kdfTargetSeconds)
        storePool.runIfActive(eventLoop: loop) { () throws -> WrappedKey in
            let master = custody.makeMasterKey()
            defer { master.zero() }
            let salt = custody.makeSalt()
            let kdf =
                insecure
                ? KDFParameters.insecureFast(salt: salt)
                : try tuner.tune(salt: salt) { candidate in
                    let start = DispatchTime.now().uptimeNanoseconds
                    _ = try custody.wrap(master, passcode: "calibration", kdf: candidate)
                    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                }
            let wrapped = try custody.wrap(master, passcode: passcode, kdf: kdf)
            try database.saveWrappedKey(wrapped, now: Date().timeIntervalSince1970)
            try database.saveAttempts(count: 0, lastFailureAt: nil)
            return wrapped
        }.assumeIsolated().whenComplete { [self] result in
            switch result {
            case .success(let wrapped):
                wrappedKey = wrapped
                logger.notice(
                    "container initialized",
                    metadata: [
                        "kdf": "scrypt N=\(wrapped.kdf.rounds) r=\(wrapped.kdf.blockSize) p=\(wrapped.kdf.parallelism)"
                    ])
                run(.initializeFinished(success: true, now: clock()))
            case .failure(let error):
                logger.error("could not initialize the keystore: \(error)")
                run(.initializeFinished(success: false, now: clock()))
            }
        }
    }
}

/// The outcome of a passcode check run off the loop.
///
/// `@unchecked` because `SecureBytes` is a mutable class: the pool's work creates the key and
/// hands it over in the future's result without keeping a reference, so only the loop touches
/// it afterwards.
enum CheckResult: @unchecked Sendable {
    case counterNotStored(String)
    case wrong
    /// The unwrapped master key (unlock) and the re-wrapped record (passcode change).
    case correct(SecureBytes?, WrappedKey?)
}
