// libFuzzer entry point for varlink message decoding (`VarlinkCodec`: call envelope, then the
// typed parameters of the method it names). The invariants are in
// Tests/CordonProtocolTests/FuzzRegressionTests.swift (`VarlinkMessageFuzzCheck`), compiled in
// with this file by scripts/fuzz.sh.

/// Runs one input; a broken invariant stops the process so libFuzzer saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVarlinkMessage(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    if let failure = VarlinkMessageFuzzCheck.check(input) { fatalError("invariant broken: \(failure)") }
    return 0
}
