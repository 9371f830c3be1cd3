/// `withUnsafeBytes` that keeps the closure's typed error (the standard library's rethrows
/// version widens it to `any Error`).
func withBytes<R>(
    _ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(AgeError) -> R
) throws(AgeError) -> R {
    var outcome: Result<R, AgeError>?
    bytes.withUnsafeBytes { buffer in
        do throws(AgeError) { outcome = .success(try body(buffer)) } catch { outcome = .failure(error) }
    }
    return try outcome!.get()
}
