extension ErrorDeclarations {
    /// The errors of `io.cordon.Posture` (device posture reports), in IDL order.
    static let posture: [ErrorDeclaration] = [
        ErrorDeclaration(
            "io.cordon.Posture.InvalidNonce",
            "The nonce is not 1 to 128 letters, digits or -_.~+/=.",
            parameters: [.string("reason")],
            decode: { .invalidNonce(reason: $0.string("reason")) },
            explain: { p in
                let reason = p.string("reason")
                return ErrorText("invalid nonce: \(reason)", hint: "use 1 to 128 letters, digits or -_.~+/=")
            })
    ]
}
