import CordonIdentity
import Testing

/// The backoff after failed renewals (docs/components/identity.md, "Background renewal and
/// backoff"): doubling from `base`, capped, jittered between half and all of the ceiling by the
/// injected unit, and what a provider's failures in a row hold back.
@Suite("Renewal backoff")
struct RenewalBackoffTests {
    let backoff = RenewalBackoff(base: 10, cap: 300)
    let refused = IdentityError.unreachable(provider: "corp", step: .refresh, reason: "refused")

    @Test("the ceiling doubles per failure up to the cap; the jitter keeps the delay in its upper half")
    func delays() {
        #expect(backoff.delay(afterFailures: 1, unit: 0) == 5)
        #expect(backoff.delay(afterFailures: 1, unit: 0.5) == 7.5)
        #expect(backoff.delay(afterFailures: 2, unit: 0) == 10)
        #expect(backoff.delay(afterFailures: 3, unit: 0) == 20)
        #expect(backoff.delay(afterFailures: 6, unit: 0) == 150)
        #expect(backoff.delay(afterFailures: 7, unit: 0) == 150, "320 is capped at 300")
        #expect(backoff.delay(afterFailures: 1000, unit: 0.999_999) <= 300)
        // Out-of-range input is clamped: no failures is the first, a unit outside [0, 1] its edge.
        #expect(backoff.delay(afterFailures: 0, unit: 0) == 5)
        #expect(backoff.delay(afterFailures: 1, unit: -3) == 5)
        #expect(backoff.delay(afterFailures: 1, unit: 7) == 10)
    }

    @Test("every jittered delay lies between half the ceiling and the ceiling")
    func jitterBounds() {
        var generator = SplitMix64(seed: 31)
        for failures in 1...12 {
            let ceiling = min(300, 10 * Double(1 << (failures - 1)))
            for _ in 0..<200 {
                let delay = backoff.delay(afterFailures: failures, unit: Double.random(in: 0..<1, using: &generator))
                #expect(delay >= ceiling / 2 && delay < ceiling, "\(failures) failures: \(delay)")
            }
        }
    }

    @Test("failures in a row hold renewals back until their delay has passed, and keep the last error")
    func failuresInARow() {
        var failures = RenewalFailures(first: refused, at: 1000, backoff: backoff, unit: 0)
        #expect(failures.count == 1 && failures.retryAt == 1005)
        #expect(failures.holds(at: 1004.9))
        #expect(!failures.holds(at: 1005))
        let down = IdentityError.serverError(provider: "corp", step: .refresh, status: 503)
        failures.failed(down, at: 1005, backoff: backoff, unit: 0)
        #expect(failures.count == 2 && failures.retryAt == 1015 && failures.lastError == down)
        failures.failed(refused, at: 1015, backoff: backoff, unit: 0.5)
        #expect(failures.retryAt == 1015 + 30, "the third: a 40 s ceiling, three quarters of it")
        #expect(failures.lastError == refused)
    }
}
