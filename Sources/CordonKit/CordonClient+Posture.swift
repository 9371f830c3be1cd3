import CordonProtocol

extension CordonClient {
    /// A posture report signed by the device key for a verifier's `nonce`, as the CLI asks for it:
    /// with the passcode (checked and counted like `Unlock`'s), while the container is unlocked
    /// (`io.cordon.Posture.Report`).
    public func postureReport(nonce: String, passcode: String) async throws -> PostureSignedReport {
        try await connection.call(
            .postureReport, PostureReportParameters(nonce: nonce, passcode: passcode),
            returning: PostureSignedReport.self)
    }

    /// The device's public key, made on first use while unlocked (`io.cordon.Posture.GetKey`).
    public func postureKey() async throws -> PostureKeyReply {
        try await connection.call(.postureKey, NoParameters(), returning: PostureKeyReply.self)
    }
}

extension CordonApp {
    /// A posture report signed by the device key for a verifier's `nonce`, naming this app (its
    /// verified registration), while the container is unlocked (`io.cordon.Posture.Report`).
    public func postureReport(nonce: String) async throws -> PostureSignedReport {
        try await control.call(
            .postureReport, PostureReportParameters(nonce: nonce), returning: PostureSignedReport.self)
    }
}
