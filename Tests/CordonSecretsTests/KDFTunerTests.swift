import CordonSecrets
import Testing

@Suite("KDFTuner")
struct KDFTunerTests {
    /// A deterministic machine: a derivation costs `secondsPerUnit` per round and per lane.
    struct FakeMachine {
        var secondsPerUnit: Double
        var calls: [KDFParameters] = []

        func seconds(for parameters: KDFParameters) -> Double {
            Double(parameters.rounds * parameters.parallelism) * secondsPerUnit
        }

        mutating func measure(_ parameters: KDFParameters) -> Double {
            calls.append(parameters)
            return seconds(for: parameters)
        }
    }

    /// A machine on which the minimum parameters (2^14, p = 1) take `baseline` seconds.
    private func machine(baseline: Double) -> FakeMachine {
        FakeMachine(secondsPerUnit: baseline / Double(1 << 14))
    }

    @Test func defaults() {
        let tuner = KDFTuner()
        #expect(tuner.targetSeconds == 0.25)
        #expect(tuner.minRounds == 1 << 14)
        #expect(tuner.maxRounds == 1 << 17)
    }

    @Test func aSlowMachineKeepsTheMinimum() {
        var fake = machine(baseline: 0.3)
        let parameters = KDFTuner().tune(salt: [9, 9]) { fake.measure($0) }
        #expect(parameters == KDFParameters(rounds: 1 << 14, blockSize: 8, parallelism: 1, salt: [9, 9]))
        #expect(fake.calls.count == 1)
        #expect(!parameters.isInsecure)
    }

    @Test func roundsDoubleUntilTheTargetIsReached() {
        var fake = machine(baseline: 0.05)  // 2^15: 0.1 s, 2^16: 0.2 s
        let parameters = KDFTuner().tune(salt: [1]) { fake.measure($0) }
        #expect(parameters.rounds == 1 << 16)
        #expect(parameters.parallelism == 1)
        #expect(parameters.blockSize == 8)
        #expect(fake.calls.map(\.rounds) == [1 << 14, 1 << 16], "measured at the start and once at the estimate")
    }

    @Test(arguments: [0.25, 0.2, 0.15, 0.1, 0.07, 0.05, 0.04, 0.035])
    func reachesTheTargetWithoutOvershootingMuch(baseline: Double) {
        var fake = machine(baseline: baseline)
        let tuner = KDFTuner(targetSeconds: 0.25)
        let parameters = tuner.tune(salt: []) { fake.measure($0) }
        let seconds = fake.seconds(for: parameters)
        #expect(seconds >= 0.25 * 0.75)
        #expect(seconds < 0.25 * 1.5)
        #expect(parameters.rounds <= tuner.maxRounds)
        #expect(parameters.rounds >= tuner.minRounds)
        #expect(parameters.rounds.nonzeroBitCount == 1, "N stays a power of two")
    }

    @Test func pastTheRoundsCapParallelismGrows() {
        var fake = machine(baseline: 0.01)  // 2^17: 0.08 s
        let parameters = KDFTuner().tune(salt: []) { fake.measure($0) }
        #expect(parameters.rounds == 1 << 17, "memory is capped at N = 2^17")
        #expect(parameters.parallelism == 3)
        #expect(fake.seconds(for: parameters) >= 0.25 * 0.75)
        #expect(parameters.memoryBytes == 128 * (1 << 17) * 8)
    }

    @Test func aVeryFastMachineStopsAtBothCaps() {
        var fake = machine(baseline: 1e-7)
        let parameters = KDFTuner().tune(salt: []) { fake.measure($0) }
        #expect(parameters.rounds == 1 << 17)
        #expect(parameters.parallelism == 16)
        #expect(fake.calls.allSatisfy { $0.rounds <= 1 << 17 && $0.parallelism <= 16 })
    }

    @Test func aCustomRoundsCapIsRespected() {
        var tuner = KDFTuner(targetSeconds: 1)
        tuner.minRounds = 1 << 10
        tuner.maxRounds = 1 << 12
        var fake = FakeMachine(secondsPerUnit: 1e-5)  // 2^12: 0.04 s
        let parameters = tuner.tune(salt: []) { fake.measure($0) }
        #expect(parameters.rounds == 1 << 12)
        #expect(parameters.parallelism == 16)
        #expect(fake.calls.allSatisfy { $0.rounds <= 1 << 12 })
    }

    @Test func everyMeasurementUsesTheSalt() {
        var fake = machine(baseline: 0.001)
        let salt: [UInt8] = [1, 2, 3, 4]
        let parameters = KDFTuner().tune(salt: salt) { fake.measure($0) }
        #expect(parameters.salt == salt)
        #expect(!fake.calls.isEmpty)
        #expect(fake.calls.allSatisfy { $0.salt == salt })
    }

    @Test func measurementErrorsPropagate() {
        struct MeasureFailed: Error {}
        #expect(throws: MeasureFailed.self) {
            try KDFTuner().tune(salt: []) { _ in throw MeasureFailed() }
        }
    }

    @Test func aLongerTargetGivesStrongerParameters() {
        var fast = machine(baseline: 0.02)
        var slow = machine(baseline: 0.02)
        let quarter = KDFTuner(targetSeconds: 0.25).tune(salt: []) { fast.measure($0) }
        let second = KDFTuner(targetSeconds: 1).tune(salt: []) { slow.measure($0) }
        #expect(quarter.rounds * quarter.parallelism < second.rounds * second.parallelism)
    }
}
