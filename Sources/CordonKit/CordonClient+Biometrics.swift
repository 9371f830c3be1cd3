import CordonProtocol

extension CordonClient {
    /// Unlocks with a fingerprint through fprintd; the passcode (`unlock(passcode:)`) stays the
    /// fallback. Throws `BiometricsDisabled`, `BiometricsNotEnabled`, `BiometricsPasscodeNeeded`
    /// (the first unlock after the agent starts, or 48 hours after the last passcode unlock),
    /// `BiometricsUnavailable`, or `WrongPasscode` for a finger that does not match (counted).
    public func unlockWithFingerprint() async throws {
        _ = try await connection.call(.unlockWithFingerprint, NoParameters(), returning: NoParameters.self)
    }

    /// Opts into fingerprint unlock (with the passcode, while unlocked) or out of it (`enabled`
    /// false: no passcode needed, and the key kept for it is zeroed at once).
    public func setBiometrics(enabled: Bool, passcode: String? = nil) async throws {
        _ = try await connection.call(
            .setBiometrics, SetBiometricsParameters(enabled: enabled, passcode: passcode), returning: NoParameters.self)
    }
}
