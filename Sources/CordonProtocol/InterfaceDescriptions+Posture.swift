extension InterfaceDescriptions {
    /// `io.cordon.Posture`: the device's posture.
    public static let posture = """
        # The device's posture: checks of the machine, each pass, fail or unknown with its evidence.
        interface io.cordon.Posture

        type Result (
          check: (secureBoot, kernelLockdown, diskEncryption, screenLock, kernelTaint, ptraceScope, osVersion,
            kernelVersion),
          status: (pass, fail, unknown),
          evidence: string
        )

        # Every check, read now (or within the last few seconds). A check the machine cannot answer is
        # unknown, never pass.
        method Get() -> (checks: []Result)

        # A signed report of the checks for a verifier (a backend) that sent nonce: payload is the
        # canonical JSON (nonce, time in ms, requester, policyVersion, checks, keyId), signature is
        # Ed25519 by the device key over "cordon.posture.report.v1", a NUL byte and the payload bytes.
        # Only a verified managed registration (token: on another connection of its process) or,
        # with the passcode, the CLI; only while the container is unlocked. The device key is made
        # on first use and kept sealed in the container.
        method Report(nonce: string, passcode: ?string, token: ?string) -> (
          format: string,
          payload: string,
          signature: string,
          publicKey: string
        )

        # The device's public key (Ed25519, base64) and its id; made on first use (unlocked only).
        method GetKey() -> (publicKey: string, keyId: string)

        """ + ErrorDeclarations.idl(for: "io.cordon.Posture")
}
