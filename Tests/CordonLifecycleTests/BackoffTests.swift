import CordonLifecycle
import Testing

@Suite("Backoff")
struct BackoffTests {
    @Test func defaultsAreThreeFreeAttemptsThenDoublingFromOneSecondCappedAtFiveMinutes() {
        let backoff = Backoff()
        #expect(backoff.freeAttempts == 3)
        #expect(backoff.baseSeconds == 1)
        #expect(backoff.maxSeconds == 300)
        let delays = (0...14).map { backoff.delay(afterFailures: $0) }
        #expect(delays == [0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300])
    }

    @Test func negativeOrZeroFailuresHaveNoDelay() {
        #expect(Backoff().delay(afterFailures: 0) == 0)
        #expect(Backoff().delay(afterFailures: -5) == 0)
        #expect(Backoff(freeAttempts: 0).delay(afterFailures: 0) == 0)
    }

    @Test func withoutFreeAttemptsTheFirstFailureWaits() {
        let backoff = Backoff(freeAttempts: 0, baseSeconds: 0.5, maxSeconds: 10)
        let delays = (1...7).map { backoff.delay(afterFailures: $0) }
        #expect(delays == [0.5, 1, 2, 4, 8, 10, 10])
    }

    @Test func hugeFailureCountsStayAtTheCap() {
        let backoff = Backoff(freeAttempts: 3, baseSeconds: 1, maxSeconds: 300)
        #expect(backoff.delay(afterFailures: 40) == 300)
        #expect(backoff.delay(afterFailures: 1_000) == 300)
        #expect(backoff.delay(afterFailures: Int.max) == 300)
        let uncapped = Backoff(freeAttempts: 0, baseSeconds: 1, maxSeconds: .infinity)
        #expect(uncapped.delay(afterFailures: 1_000) == Double(1 << 30), "the exponent is capped at 30")
    }

    @Test func zeroOrNegativeBaseDisablesTheBackOff() {
        #expect(Backoff(freeAttempts: 0, baseSeconds: 0).delay(afterFailures: 10) == 0)
        #expect(Backoff(freeAttempts: 0, baseSeconds: -1).delay(afterFailures: 10) == 0)
    }

    @Test func delayNeverDecreasesAsFailuresGrow() {
        let backoff = Backoff(freeAttempts: 2, baseSeconds: 0.25, maxSeconds: 60)
        let delays = (0...50).map { backoff.delay(afterFailures: $0) }
        #expect(zip(delays, delays.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(delays.allSatisfy { $0 >= 0 && $0 <= 60 })
    }

    @Test func backoffDefaults() {
        let configuration = LifecycleConfiguration.testing()
        #expect(configuration.backoff == Backoff())
    }
}
