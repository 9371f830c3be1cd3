import Testing

@testable import CordonKit

/// `SecureFile.offThePool`, which runs a stream's blocking I/O on a Dispatch thread: it held the
/// caller's non-escaping closure in the Dispatch block until after the caller resumed, and
/// `withoutActuallyEscaping` trapped ("non-escaping closure has escaped") whenever the block
/// outlived the call — about once in a few thousand calls, every time on a 256 MiB file.
@Suite struct SecureFileOffThePoolTests {
    @Test func theWorkIsReleasedBeforeTheCallerGoesOn() async throws {
        var total = 0
        for round in 0..<20_000 {
            var local = round
            // A closure that captures a local, so it has a context whose references are counted.
            total += try await SecureFile.offThePool {
                local += 1
                return local
            }
        }
        #expect(total == (1...20_000).reduce(0, +))
    }

    @Test func anErrorThrownByTheWorkReachesTheCaller() async {
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await SecureFile.offThePool { () throws -> Int in throw Refused() }
        }
    }
}
