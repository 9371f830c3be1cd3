import CordonAge
import Foundation

/// Encrypts and decrypts the same file with CordonAge (`AgeFile`, streaming between descriptors),
/// with `SecureFile` (the SDK: an app of a running agent, its derived identity, the key checked per
/// chunk, fsync and rename) and with the `age` CLI (GOMAXPROCS=1), all single-threaded, and reports
/// MB/s for each. The ciphertext goes to a file, the plaintext of a decryption to /dev/null.
struct StorageFileBenchmark {
    let options: StorageFileOptions

    struct Report: Codable {
        let sizeMiB: Int
        let runs: Int
        let cordonEncryptMBps: Double
        let cordonDecryptMBps: Double
        let secureFileEncryptMBps: Double
        let secureFileDecryptMBps: Double
        let ageEncryptMBps: Double
        /// `age` and then an fsync of the file it wrote: the same durability as `SecureFile`.
        let ageDurableEncryptMBps: Double
        let ageDecryptMBps: Double
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
        var best = (cordonEncrypt: Double.infinity, cordonDecrypt: Double.infinity)
        var bestAge = (encrypt: Double.infinity, durableEncrypt: Double.infinity, decrypt: Double.infinity)
        var bestSDK = (encrypt: Double.infinity, decrypt: Double.infinity)
        for _ in 0..<max(1, options.fileRuns) {
            best.cordonEncrypt = min(
                best.cordonEncrypt,
                try StorageFileIO.timed {
                    try StorageFileIO.withDescriptors(plain, ours) { input, output in
                        try AgeFile.encrypt(from: input, to: output, recipients: [identity.recipient])
                    }
                })
            best.cordonDecrypt = min(
                best.cordonDecrypt,
                try StorageFileIO.timed {
                    try StorageFileIO.withDescriptors(ours, "/dev/null") { input, output in
                        try AgeFile.decrypt(from: input, to: output, identities: [identity])
                    }
                })
            bestSDK.encrypt = min(bestSDK.encrypt, try StorageFileIO.timed { try secureFile.encrypt(plain, to: sdk) })
            bestSDK.decrypt = min(bestSDK.decrypt, try StorageFileIO.timed { try secureFile.decrypt(sdk) })
            bestAge.encrypt = min(
                bestAge.encrypt,
                try StorageFileIO.timed {
                    try StorageFileIO.runAge(options.age, ["-r", identity.recipient.encoded, "-o", theirs, plain])
                })
            bestAge.durableEncrypt = min(
                bestAge.durableEncrypt,
                try StorageFileIO.timed {
                    try StorageFileIO.runAge(options.age, ["-r", identity.recipient.encoded, "-o", theirs, plain])
                    try StorageFileIO.sync(theirs)
                })
            bestAge.decrypt = min(
                bestAge.decrypt,
                try StorageFileIO.timed {
                    try StorageFileIO.runAge(options.age, ["-d", "-i", keyFile, "-o", "/dev/null", theirs])
                })
        }
        // Each side opens the other's file too: the figures are for the same format.
        try StorageFileIO.runAge(options.age, ["-d", "-i", keyFile, "-o", "/dev/null", ours])
        try StorageFileIO.withDescriptors(theirs, "/dev/null") { input, output in
            try AgeFile.decrypt(from: input, to: output, identities: [identity])
        }

        let megabytes = Double(bytes) / 1_000_000
        let report = Report(
            sizeMiB: options.sizeMib, runs: max(1, options.fileRuns),
            cordonEncryptMBps: megabytes / best.cordonEncrypt, cordonDecryptMBps: megabytes / best.cordonDecrypt,
            secureFileEncryptMBps: megabytes / bestSDK.encrypt, secureFileDecryptMBps: megabytes / bestSDK.decrypt,
            ageEncryptMBps: megabytes / bestAge.encrypt,
            ageDurableEncryptMBps: megabytes / bestAge.durableEncrypt, ageDecryptMBps: megabytes / bestAge.decrypt,
            peakResidentBeforeKiB: peakBefore, peakResidentKiB: StorageFileIO.peakResidentKiB())
        if options.json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print("storage --file: \(report.sizeMiB) MiB, best of \(report.runs), single-threaded, MB/s")
            print(
                String(
                    format: "  encrypt  CordonAge %8.1f   age %8.1f   ratio %.2f×", report.cordonEncryptMBps,
                    report.ageEncryptMBps, report.cordonEncryptMBps / report.ageEncryptMBps))
            print(
                String(
                    format: "  decrypt  CordonAge %8.1f   age %8.1f   ratio %.2f×", report.cordonDecryptMBps,
                    report.ageDecryptMBps, report.cordonDecryptMBps / report.ageDecryptMBps))
            print(
                String(
                    format: "  encrypt  SecureFile %7.1f   age %8.1f   ratio %.2f×"
                        + "   (age then fsync %.1f, ratio %.2f×)",
                    report.secureFileEncryptMBps, report.ageEncryptMBps,
                    report.secureFileEncryptMBps / report.ageEncryptMBps, report.ageDurableEncryptMBps,
                    report.secureFileEncryptMBps / report.ageDurableEncryptMBps))
            print(
                String(
                    format: "  decrypt  SecureFile %7.1f   age %8.1f   ratio %.2f×", report.secureFileDecryptMBps,
                    report.ageDecryptMBps, report.secureFileDecryptMBps / report.ageDecryptMBps))
            print(
                "  bench process peak RSS (VmHWM): \(report.peakResidentBeforeKiB) KiB before the runs, "
                    + "\(report.peakResidentKiB) KiB after")
        }
    }
}
