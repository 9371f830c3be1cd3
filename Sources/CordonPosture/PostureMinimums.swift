/// The minimum versions the policy names; nil: no minimum (the check passes and says so).
public struct PostureMinimums: Sendable, Equatable {
    /// Per `os-release` `ID` (`"debian": "12"`): the lowest `VERSION_ID`.
    public var osVersions: [String: String]
    /// The lowest kernel release (`6.1`).
    public var kernel: String?

    public init(osVersions: [String: String] = [:], kernel: String? = nil) {
        self.osVersions = osVersions
        self.kernel = kernel
    }
}
