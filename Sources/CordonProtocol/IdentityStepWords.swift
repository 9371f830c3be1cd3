/// The steps of a sign-in (`IdentityStep`'s names, as `SignInFailed` carries them) in the words a
/// user reads.
enum IdentityStepWords {
    static func phrase(_ step: String) -> String {
        switch step {
        case "deviceAuthorization": "the device authorization request"
        case "authorization": "the browser's authorization"
        case "token": "the token request"
        case "refresh": "the token refresh"
        case "revocation": "the revocation"
        case "registration": "the client registration"
        case "association": "the association"
        case "idToken": "the ID token check"
        case "discovery": "discovery"
        default: step
        }
    }
}
