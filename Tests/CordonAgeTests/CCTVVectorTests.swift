import Foundation
import Testing

@testable import CordonAge

/// One C2SP CCTV age vector: its header fields and the age file after them.
struct CCTVVector: Sendable, CustomStringConvertible {
    let name: String
    var expect = ""
    var payloadHash = ""
    var identities: [String] = []
    var passphrases: [String] = []
    var armored = false
    var compressed = false
    var file: [UInt8] = []

    var description: String { name }

    static var directory: URL { AgeTestSupport.suiteDirectory.appendingPathComponent("vectors/testdata") }

    static func names() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    init(name: String) throws {
        self.name = name
        let bytes = Array(try Data(contentsOf: Self.directory.appendingPathComponent(name)))
        var offset = 0
        while let end = bytes[offset...].firstIndex(of: 0x0A) {
            let line = String(decoding: bytes[offset..<end], as: UTF8.self)
            offset = end + 1
            if line.isEmpty { break }
            guard let colon = line.range(of: ": ") else { continue }
            let value = String(line[colon.upperBound...])
            switch line[..<colon.lowerBound] {
            case "expect": expect = value
            case "payload": payloadHash = value
            case "identity": identities.append(value)
            case "passphrase": passphrases.append(value)
            case "armored": armored = value == "yes"
            case "compressed": compressed = value == "zlib"
            default: break
            }
        }
        file = Array(bytes[offset...])
        if compressed { file = try AgeTestSupport.inflate(file) }
    }

    /// True for the post-quantum hybrid vectors, which CordonAge does not implement.
    var isHybrid: Bool { identities.contains { $0.hasPrefix("AGE-SECRET-KEY-PQ-") } }
}

@Suite("C2SP CCTV age vectors")
struct CCTVVectorTests {
    /// The vectors skipped, with the reason: the MLKEM768-X25519 recipient type is not implemented
    /// (listed in vectors/README.md too).
    static let skipped: Set<String> = [
        "armor_hybrid", "hybrid", "hybrid_and_x25519", "hybrid_bad_tag", "hybrid_currupted_enc_mlkem",
        "hybrid_currupted_enc_x25519", "hybrid_extra_argument", "hybrid_grease", "hybrid_identity",
        "hybrid_long_file_key", "hybrid_long_share", "hybrid_low_order", "hybrid_multiple_recipients",
        "hybrid_no_match", "hybrid_not_canonical_body", "hybrid_not_canonical_enc", "hybrid_short_share",
        "hybrid_uppercase", "hybrid_x25519_arg",
    ]

    @Test func allVectorsArePresentAndOnlyTheHybridOnesAreSkipped() throws {
        let names = CCTVVector.names()
        #expect(names.count == 143)
        let hybrid = Set(try names.map(CCTVVector.init(name:)).filter(\.isHybrid).map(\.name))
        #expect(hybrid == Self.skipped)
    }

    /// Every supported vector: success decrypts to the payload hash; a failure is refused with the
    /// class it names, and what was emitted before (authenticated chunks only) matches the hash.
    @Test(arguments: CCTVVector.names().filter { !skipped.contains($0) })
    func vector(_ name: String) throws {
        let vector = try CCTVVector(name: name)
        var identities: [any AgeIdentity] = []
        for key in vector.identities { identities.append(try AgeX25519Identity(encoded: key)) }
        for passphrase in vector.passphrases { identities.append(try AgeScryptIdentity(passphrase: passphrase)) }

        var file = vector.file
        if vector.armored {
            do throws(AgeError) {
                file = try AgeArmor.dearmor(file)
            } catch {
                #expect(error.failureClass.rawValue == vector.expect, "\(name): \(error)")
                return
            }
        }
        // Whole, and fed a few bytes at a time: the same outcome.
        for pieces in [[1 << 24], [7, 1, 300, 65_536]] {
            let (output, error) = AgeTestSupport.decrypt(file, identities: identities, pieces: pieces)
            if vector.expect == "success" {
                #expect(error == nil, "\(name): \(String(describing: error))")
            } else {
                #expect(error?.failureClass.rawValue == vector.expect, "\(name): \(String(describing: error))")
            }
            if ["success", "payload failure"].contains(vector.expect) {
                #expect(AgeTestSupport.sha256(output) == vector.payloadHash, "\(name)")
            } else {
                #expect(output.isEmpty, "\(name)")
            }
        }
    }

    /// The armored vectors that decode re-encode to the same armor (modulo the whitespace and
    /// CRLF the reader tolerates).
    @Test(arguments: ["armor_x25519", "armor_full_last_line", "armor_scrypt"])
    func armorRoundTrips(_ name: String) throws {
        let vector = try CCTVVector(name: name)
        let binary = try AgeArmor.dearmor(vector.file)
        #expect(AgeArmor.armor(binary) == vector.file)
    }
}
