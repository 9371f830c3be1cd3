/// `withUnsafeBytes` that keeps the closure's typed error (the standard library's rethrows
/// version widens it to `any Error`).
func withBytes<R, E: Error>(
    _ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(E) -> R
) throws(E) -> R {
    var outcome: Result<R, E>?
    bytes.withUnsafeBytes { buffer in
        do throws(E) { outcome = .success(try body(buffer)) } catch { outcome = .failure(error) }
    }
    guard let outcome else { preconditionFailure("withUnsafeBytes did not call its body") }
    return try outcome.get()
}
