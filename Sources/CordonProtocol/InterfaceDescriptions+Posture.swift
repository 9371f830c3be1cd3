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

        """
}
