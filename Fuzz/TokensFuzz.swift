// libFuzzer entry point for the token parsers (CTF strings, otpauth and otpauth-migration URIs,
// the protobuf payload, the bounded XML reader, SDTID files). The invariants are in
// Tests/CordonTokensTests/FuzzRegressionTests.swift (`TokensFuzzCheck`), compiled in with this
// file by scripts/fuzz.sh.

/// Runs one input; a broken invariant stops the process so libFuzzer saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTokens(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    if let failure = TokensFuzzCheck.check(input) { fatalError("invariant broken: \(failure)") }
    return 0
}
