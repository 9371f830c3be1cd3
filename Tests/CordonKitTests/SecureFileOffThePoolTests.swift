import Foundation
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
            let box = Box(round)
            // A closure that captures a reference, so it has a context whose references are
            // counted. The box's lock orders the Dispatch thread's accesses before the caller's own
            // (ThreadSanitizer sees a pthread mutex, whatever it sees of the continuation).
            let returned = try await SecureFile.offThePool { box.increment() }
            total += returned
            #expect(box.value == returned)
        }
        #expect(total == (1...20_000).reduce(0, +))
    }

    /// A counter behind a lock.
    final class Box: @unchecked Sendable {
        private let lock = NSLock()
        private var count: Int

        init(_ count: Int) { self.count = count }

        var value: Int { lock.withLock { count } }

        func increment() -> Int {
            lock.withLock {
                count += 1
                return count
            }
        }
    }

    @Test func anErrorThrownByTheWorkReachesTheCaller() async {
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await SecureFile.offThePool { () throws -> Int in throw Refused() }
        }
    }
}
