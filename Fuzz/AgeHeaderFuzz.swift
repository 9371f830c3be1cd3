// libFuzzer entry point for the age header parser, the ASCII armor decoder and Bech32
// (CordonAge's parsing files). The invariants are in Tests/CordonAgeTests/FuzzRegressionTests.swift
// (`AgeHeaderFuzzCheck`), compiled in with this file by scripts/fuzz.sh.

/// Runs one input; a broken invariant stops the process so libFuzzer saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAgeHeader(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    if let failure = AgeHeaderFuzzCheck.check(input) { fatalError("invariant broken: \(failure)") }
    return 0
}
