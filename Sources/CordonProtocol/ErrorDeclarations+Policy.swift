extension ErrorDeclarations {
    /// The errors of `io.cordon.Policy` (the policy in force), in IDL order.
    /// `UnknownAction` is an alias: it decodes to the case `io.cordon.App.UnknownAction` encodes.
    static let policy: [ErrorDeclaration] = [
        ErrorDeclaration(
            "io.cordon.Policy.UnknownAction",
            "The action name is not one the policy decides.",
            parameters: [.string("action")],
            decode: { .unknownAction(action: $0.string("action")) })
    ]
}
