import CordonAge
import CordonBenchSummary
import Foundation

/// Encrypts and decrypts the same file with CordonAge (`AgeFile`, streaming between descriptors),
/// with `SecureFile` (the SDK: an app of a running agent, its derived identity, the key checked per
/// chunk, fsync and rename) and with the `age` CLI (GOMAXPROCS=1), all single-threaded, and reports
/// MB/s for each. The ciphertext goes to a file, the plaintext of a decryption to /dev/null.
struct StorageFileBenchmark {
    let options: StorageFileOptions
    let summary: SummaryOption

    /// What is timed, each once per run, in this order.
    enum Side: Hashable {
        case cordonEncrypt, cordonDecrypt, secureFileEncrypt, secureFileDecrypt
        case ageEncrypt, ageDurableEncrypt, ageDecrypt
    }

    /// A side's throughput: by the clock on the wall (best run), and by the CPU time it used
    /// (best run; the benchmark's own process for CordonAge and SecureFile, the reaped child for
    /// `age`), which other work on the machine disturbs far less.
    struct Rate: Codable {
        let wallMBps: Double
        let cpuMBps: Double
    }

    struct Report: Codable {
        let sizeMiB: Int
        let runs: Int
        let cordonEncrypt: Rate
        let cordonDecrypt: Rate
        let secureFileEncrypt: Rate
        let secureFileDecrypt: Rate
        let ageEncrypt: Rate
        /// `age` and then an fsync of the file it wrote: the same durability as `SecureFile`.
        let ageDurableEncrypt: Rate
        let ageDecrypt: Rate
        /// The bench process's peak resident memory (VmHWM) before the runs, and after them.
        let peakResidentBeforeKiB: Int
        let peakResidentKiB: Int
    }

    func run() throws {
        guard FileManager.default.isExecutableFile(atPath: options.age) else {
            throw BenchError.daemon("\(options.age) not found (install the age package: scripts/install-deps.sh)")
        }
        let base = options.directory ?? FileManager.default.temporaryDirectory.path
        let folder = URL(fileURLWithPath: base).appendingPathComponent("cordon-bench-storage-file-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let plain = folder.appendingPathComponent("plain").path
        let bytes = options.sizeMib * 1024 * 1024
        try StorageFileIO.writeRandomFile(plain, bytes: bytes)

        let identity = AgeX25519Identity.generate()
        let keyFile = folder.appendingPathComponent("key.txt").path
        try Data((identity.encoded + "\n").utf8).write(to: URL(fileURLWithPath: keyFile))
        let ours = folder.appendingPathComponent("ours.age").path
        let theirs = folder.appendingPathComponent("theirs.age").path
        let sdk = folder.appendingPathComponent("sdk.age").path
        let secureFile = try StorageSecureFileSide(directory: folder.appendingPathComponent("agent").path)
        defer { secureFile.stop() }

        let peakBefore = StorageFileIO.peakResidentKiB()
        var sides = [Side: StorageFileIO.Best]()
        // Each side starts from the same state: the previous side's ciphertext gone and every dirty
        // page on the disk (untimed), so no side pays for another's truncation or writeback.
        func measure(_ side: Side, removing output: String? = nil, _ body: () throws -> Void) throws {
            if let output { unlink(output) }
            sync()
            sides[side, default: StorageFileIO.Best()].add(try StorageFileIO.measured(body))
        }
        for _ in 0..<max(1, options.fileRuns) {
            try measure(.cordonEncrypt, removing: ours) {
                try StorageFileIO.withDescriptors(plain, ours) { input, output in
                    try AgeFile.encrypt(from: input, to: output, recipients: [identity.recipient])
                }
            }
            try measure(.cordonDecrypt) {
                try StorageFileIO.withDescriptors(ours, "/dev/null") { input, output in
                    try AgeFile.decrypt(from: input, to: output, identities: [identity])
                }
            }
            try measure(.secureFileEncrypt, removing: sdk) { try secureFile.encrypt(plain, to: sdk) }
            try measure(.secureFileDecrypt) { try secureFile.decrypt(sdk) }
            try measure(.ageEncrypt, removing: theirs) {
                try StorageFileIO.runAge(options.age, ["-r", identity.recipient.encoded, "-o", theirs, plain])
            }
            try measure(.ageDurableEncrypt, removing: theirs) {
                try StorageFileIO.runAge(options.age, ["-r", identity.recipient.encoded, "-o", theirs, plain])
                try StorageFileIO.sync(theirs)
            }
            try measure(.ageDecrypt) {
                try StorageFileIO.runAge(options.age, ["-d", "-i", keyFile, "-o", "/dev/null", theirs])
            }
        }
        // Each side opens the other's file too: the figures are for the same format.
        try StorageFileIO.runAge(options.age, ["-d", "-i", keyFile, "-o", "/dev/null", ours])
        try StorageFileIO.withDescriptors(theirs, "/dev/null") { input, output in
            try AgeFile.decrypt(from: input, to: output, identities: [identity])
        }

        let megabytes = Double(bytes) / 1_000_000
        func rate(_ side: Side) -> Rate {
            let best = sides[side, default: StorageFileIO.Best()]
            return Rate(wallMBps: megabytes / best.wall, cpuMBps: megabytes / best.cpu)
        }
        let report = Report(
            sizeMiB: options.sizeMib, runs: max(1, options.fileRuns),
            cordonEncrypt: rate(.cordonEncrypt), cordonDecrypt: rate(.cordonDecrypt),
            secureFileEncrypt: rate(.secureFileEncrypt), secureFileDecrypt: rate(.secureFileDecrypt),
            ageEncrypt: rate(.ageEncrypt), ageDurableEncrypt: rate(.ageDurableEncrypt), ageDecrypt: rate(.ageDecrypt),
            peakResidentBeforeKiB: peakBefore, peakResidentKiB: StorageFileIO.peakResidentKiB())
        if options.json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(
                "storage --file: \(report.sizeMiB) MiB, best of \(report.runs), single-threaded, MB/s (wall | CPU time)"
            )
            let rows: [(String, Rate, String, Rate)] = [
                ("encrypt  CordonAge ", report.cordonEncrypt, "age", report.ageEncrypt),
                ("decrypt  CordonAge ", report.cordonDecrypt, "age", report.ageDecrypt),
                ("encrypt  SecureFile", report.secureFileEncrypt, "age", report.ageEncrypt),
                ("encrypt  SecureFile", report.secureFileEncrypt, "age+fsync", report.ageDurableEncrypt),
                ("decrypt  SecureFile", report.secureFileDecrypt, "age", report.ageDecrypt),
            ]
            for (name, ours, baseline, theirs) in rows {
                print(
                    String(
                        format: "  %@ %7.1f | %7.1f   %@ %7.1f | %7.1f   ratio %.2f× | %.2f×", name, ours.wallMBps,
                        ours.cpuMBps, baseline.padding(toLength: 9, withPad: " ", startingAt: 0), theirs.wallMBps,
                        theirs.cpuMBps, ours.wallMBps / theirs.wallMBps,
                        ours.cpuMBps / theirs.cpuMBps))
            }
            print(
                "  bench process peak RSS (VmHWM): \(report.peakResidentBeforeKiB) KiB before the runs, "
                    + "\(report.peakResidentKiB) KiB after")
        }
        try summary.append(records(sides))
    }

    /// The targets: each run's throughput over age's in the same run, by CPU time (which other work
    /// on the machine disturbs far less than the wall clock). `SecureFile` returns only once its
    /// file is on the disk (the fsync's writeback is charged to the caller's CPU time), so its
    /// encryption is held against `age` made as durable (`age+fsync`); the plain `age` ratio is in
    /// the table above.
    func records(_ sides: [Side: StorageFileIO.Best]) -> [SummaryRecord] {
        let pairs: [(String, Side, Side, String)] = [
            ("CordonAge encrypt", .cordonEncrypt, .ageEncrypt, "age CLI (GOMAXPROCS=1), by CPU time"),
            ("CordonAge decrypt", .cordonDecrypt, .ageDecrypt, "age CLI (GOMAXPROCS=1), by CPU time"),
            (
                "SecureFile encrypt", .secureFileEncrypt, .ageDurableEncrypt,
                "age CLI then fsync (as durable), by CPU time"
            ),
            ("SecureFile decrypt", .secureFileDecrypt, .ageDecrypt, "age CLI (GOMAXPROCS=1), by CPU time"),
        ]
        return pairs.map { subject, ours, theirs, baseline in
            // Throughput ratio = age's CPU seconds over ours for the same bytes.
            let ratios = zip(sides[ours]?.costs ?? [], sides[theirs]?.costs ?? []).map { $1.cpu / max($0.cpu, 1e-9) }
            return SummaryRecord(
                benchmark: "storage --file", subject: "\(subject), \(options.sizeMib) MiB", comparison: .atLeast,
                targetValue: 1, unit: "×", baseline: baseline, values: ratios)
        }
    }
}
