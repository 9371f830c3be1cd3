import ArgumentParser

/// The options of `cordon-bench storage --file`.
struct StorageFileOptions: ParsableArguments {
    @Flag(help: "Encrypt and decrypt a file with CordonAge and with the age CLI (single-threaded).")
    var file = false
    @Option(help: "File size in MiB.")
    var sizeMib = 256
    @Option(help: "Runs of each direction; the best is reported, and each run's ratio in the summary.")
    var fileRuns = 5
    @Option(help: "The age CLI.")
    var age = "/usr/bin/age"
    @Option(help: "Directory for the plaintext and ciphertext files (default: the temporary directory).")
    var directory: String?
    @Flag(help: "Print JSON instead of a table.")
    var json = false
}
