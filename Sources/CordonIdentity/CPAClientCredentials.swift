/// The client id and secret a CPA authorization provider gave this device at `/register` (ETSI TS
/// 103 407 §8.2): kept by the agent per provider (they are the device's identity there, shared by
/// every domain) and sent with every association and token request.
///
/// The secret never appears in `description`, `debugDescription` or a mirror (docs/ARCHITECTURE.md,
/// "Identity").
public struct CPAClientCredentials: Sendable, Equatable, Codable, CustomStringConvertible,
    CustomDebugStringConvertible, CustomReflectable
{
    public var clientID: String
    public var clientSecret: String

    public init(clientID: String, clientSecret: String) {
        self.clientID = clientID
        self.clientSecret = clientSecret
    }

    public var description: String { "CPA client \(clientID)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["clientID": clientID], displayStyle: .struct) }
}

/// What the agent tells a CPA provider about itself when it registers (`client_name`,
/// `software_id`, `software_version`, ETSI TS 103 407 §8.2).
public struct CPAClientDescription: Sendable, Equatable {
    public var clientName: String
    public var softwareID: String
    public var softwareVersion: String

    public init(clientName: String, softwareID: String, softwareVersion: String) {
        self.clientName = clientName
        self.softwareID = softwareID
        self.softwareVersion = softwareVersion
    }
}
