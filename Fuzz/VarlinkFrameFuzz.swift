// libFuzzer entry point for varlink frame splitting (`VarlinkFrameSplitter`). The invariants are
// in Tests/CordonProtocolTests/FuzzRegressionTests.swift (`VarlinkFrameFuzzCheck`), compiled in
// with this file by scripts/fuzz.sh.

/// Runs one input; a broken invariant stops the process so libFuzzer saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVarlinkFrame(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    if let failure = VarlinkFrameFuzzCheck.check(input) { fatalError("invariant broken: \(failure)") }
    return 0
}
