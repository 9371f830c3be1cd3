/// `SetBiometrics` parameters: opt into (`enabled`, with the passcode) or out of fingerprint unlock
/// (docs/PROTOCOL.md, "Fingerprint unlock").
public struct SetBiometricsParameters: Sendable, Codable {
    public var enabled: Bool
    /// Needed to opt in; ignored when opting out.
    public var passcode: String?
    public init(enabled: Bool, passcode: String?) {
        self.enabled = enabled
        self.passcode = passcode
    }
}
