extension ErrorDeclarations {
    /// The errors of `io.cordon.Pasteboard` (the managed pasteboard), in IDL order.
    static let pasteboard: [ErrorDeclaration] = [
        ErrorDeclaration(
            "io.cordon.Pasteboard.Empty",
            "The pasteboard is empty.",
            parameters: [],
            decode: { _ in .pasteboardEmpty },
            explain: { _ in
                ErrorText(
                    "the managed pasteboard is empty", hint: "copy something first: `cordon pasteboard copy TEXT`")
            }),
        ErrorDeclaration(
            "io.cordon.Pasteboard.ContentTooLarge",
            "The content exceeds the pasteboard's size limit (bytes of UTF-8).",
            parameters: [.int("limit")],
            decode: { .contentTooLarge(limit: $0.int("limit")) },
            explain: { p in
                let limit = p.int("limit")
                return ErrorText(
                    "the content is larger than the pasteboard's limit of \(limit / 1024) KiB",
                    hint: "copy less at a time", exit: .usage)
            }),
    ]
}
