import CordonLifecycle
import CordonProtocol
import CordonSystem
import NIOCore

extension KeyVault {
    /// A fingerprint unlock's check: the attempt counter is stored first (as for a passcode), then
    /// fprintd scans once; a match unseals the kept key (`BiometricsComponent`), a finger that does
    /// not match is a wrong attempt, a reader failure aborts (the attempt stays counted).
    func startFingerprintCheck(device: String, count: Int, lastFailureAt: Double?, request: LifecycleRequest) {
        pending = PendingRequest(promise: request.promise, passcode: "", newPasscode: nil, encoder: request.encoder)
        let database = host.database
        let stored = host.storePool.runIfActive(eventLoop: host.loop) {
            try database.saveAttempts(count: count, lastFailureAt: lastFailureAt)
        }
        stored.assumeIsolated().whenComplete { [self] result in
            guard case .success = result else {
                logger.error("fingerprint unlock refused: the attempt counter could not be stored")
                host.run(.checkAborted(now: host.clock()))
                return
            }
            logger.notice("fingerprint unlock: waiting for a scan", metadata: ["device": "\(device)"])
            biometrics.scan(device: device).assumeIsolated().whenComplete { [self] result in
                finishFingerprintCheck(result)
            }
        }
    }

    private func finishFingerprintCheck(_ result: Result<(FingerprintReader.Outcome, ignored: Int), any Error>) {
        let now = host.clock()
        switch result {
        case .success(let (outcome, ignored)):
            if ignored > 0 {
                logger.warning(
                    "ignored VerifyStatus signals from a sender that does not own net.reactivated.Fprint",
                    metadata: ["count": "\(ignored)"])
            }
            guard outcome == .match else {
                logger.notice(
                    "fingerprint does not match", metadata: ["failedAttempts": "\(host.lifecycle.failedAttempts)"])
                host.run(.passcodeChecked(correct: false, now: now))
                return
            }
            guard let key = biometrics.unsealMaster() else {
                // Disarmed while the scan ran (limit, wipe, opt-out, policy).
                failPending(.biometricsPasscodeNeeded(reason: "fingerprint unlock was disarmed during the scan"))
                host.run(.checkAborted(now: now))
                return
            }
            if host.isShuttingDown { key.zero() } else { candidateKey = key }
            logger.notice("unlocked with a fingerprint")
            biometrics.fingerprintUnlocked()
            host.run(.passcodeChecked(correct: true, now: now))
        case .failure(let error):
            logger.error("fingerprint unlock failed: \(error)")
            failPending(.biometricsUnavailable(reason: "\(error)"))
            host.run(.checkAborted(now: now))
        }
    }
}
