// libFuzzer entry point for policy documents (`PositionedJSONParser`, `PolicyParser`, then merge,
// compile, decide and explain when the document is valid). The invariants are in
// Tests/CordonPolicyTests/FuzzRegressionTests.swift (`PolicyFuzzCheck`), compiled in with this
// file by scripts/fuzz.sh.

/// Runs one input; a broken invariant stops the process so libFuzzer saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPolicy(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    if let failure = PolicyFuzzCheck.check(input) { fatalError("invariant broken: \(failure)") }
    return 0
}
