import ArgumentParser
import Foundation

/// `cordon-bench`: Cordon's benchmarks, each measured against its baseline in the same run.
@main
struct CordonBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cordon-bench",
        abstract: "Benchmarks for Cordon, each against its baseline in the same run.",
        subcommands: [
            RTTBenchmark.self, PolicyBenchmark.self, StartupBenchmark.self, FanoutBenchmark.self,
            MemoryBenchmark.self, EnforceBenchmark.self, DeafApp.self, StorageBenchmark.self,
            UnlockBenchmark.self, TokensBenchmark.self, IdentityBenchmark.self, IdentityDownBenchmark.self,
            ChannelBenchmark.self,
            VerifyBenchmark.self, AnchorBenchmark.self, FleetPollBenchmark.self, FleetPushBenchmark.self,
            ColdReadBenchmark.self, SummaryCommand.self,
        ])
}
