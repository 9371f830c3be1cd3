import ArgumentParser

/// `cordon-bench storage`: the secure storage benchmarks (`--file`: the age file format).
struct StorageBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storage", abstract: "Secure storage throughput against its baselines.")

    @OptionGroup var file: StorageFileOptions

    func run() throws {
        guard file.file else { throw ValidationError("choose a part to measure: --file") }
        try StorageFileBenchmark(options: file).run()
    }
}
