import ArgumentParser

/// `cordon-bench storage`: the secure storage benchmarks — `--kv`, the encrypted key-value store;
/// `--file`, the age file format; both when neither is named. Targets (`--summary` appends them):
/// kv get <= 1.5x and put <= 2x plain GRDB; CordonAge and SecureFile >= 1.0x the age CLI's
/// throughput by CPU time, encrypting and decrypting.
struct StorageBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storage", abstract: "Secure storage against its baselines: --kv, --file, or both.",
        discussion: """
            --kv: the encrypted key-value store's get and put against plain GRDB on the same row,             alternately, in --kv-runs runs; then Storage.Get over the socket against GetStatus and the             separate-process echo. --file: a file encrypted and decrypted by CordonAge, SecureFile and the             age CLI in turn, --file-runs runs, MB/s by the wall clock and by CPU time. Targets (--summary             appends them, each run's ratio): get <= 1.5x and put <= 2x plain GRDB; CordonAge and             SecureFile >= 1.0x age by CPU time, encrypting and decrypting.
            """)

    @OptionGroup var keyValue: StorageKVBenchmark
    @OptionGroup var file: StorageFileOptions
    @OptionGroup var summary: SummaryOption

    func run() throws {
        let both = !keyValue.kv && !file.file
        if keyValue.kv || both { try keyValue.run(summary: summary) }
        if file.file || both { try StorageFileBenchmark(options: file, summary: summary).run() }
    }
}
