import ArgumentParser

/// `cordon-bench storage`: the secure storage benchmarks — `--kv`, the encrypted key-value store;
/// `--file`, the age file format; both when neither is named.
struct StorageBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storage", abstract: "Secure storage against its baselines: --kv, --file, or both.")

    @OptionGroup var keyValue: StorageKVBenchmark
    @OptionGroup var file: StorageFileOptions

    func run() throws {
        let both = !keyValue.kv && !file.file
        if keyValue.kv || both { try keyValue.run() }
        if file.file || both { try StorageFileBenchmark(options: file).run() }
    }
}
