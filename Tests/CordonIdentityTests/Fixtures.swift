import CordonIdentity

/// A provider on the loopback address, as the tests' local identity provider serves it.
enum Fixtures {
    static func provider(_ flow: SignInFlow = .device) -> ProviderConfiguration {
        ProviderConfiguration(
            name: "corp", clientID: "cordon-test", scopes: ["openid", "profile"], flow: flow,
            deviceAuthorizationEndpoint: "http://127.0.0.1:8000/device",
            authorizationEndpoint: "http://127.0.0.1:8000/authorize",
            tokenEndpoint: "http://127.0.0.1:8000/token", revocationEndpoint: "http://127.0.0.1:8000/revoke")
    }

    static func json(_ text: String) -> [UInt8] { Array(text.utf8) }

    static let tokens = json(
        #"{"access_token":"AT-1","token_type":"Bearer","expires_in":3600,"refresh_token":"RT-1","scope":"openid"}"#)

    /// Every string in `error`'s description and parameters, to check no secret is in it.
    static func text(_ error: IdentityError) -> String { "\(error) \(String(reflecting: error))" }
}
