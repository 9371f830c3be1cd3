// libFuzzer entry point for the fleet's TUF verifier: a trusted root, then the files a server
// serves (root, timestamp, snapshot, targets, a delegated role, a target), through `TUFRefresh`,
// and the command, status, report and date parsers. The invariants are in
// Tests/CordonFleetTests/FuzzRegressionTests.swift (`TUFFuzzCheck`), compiled in with this file by
// scripts/fuzz.sh.

/// Runs one input; a broken invariant stops the process so libFuzzer saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTUF(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    if let failure = TUFFuzzCheck.check(input) { fatalError("invariant broken: \(failure)") }
    return 0
}
