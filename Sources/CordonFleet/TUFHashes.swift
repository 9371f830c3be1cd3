import Crypto

/// The hashes a role promises for a file: sha256 and sha512 are checked; at least one must be known.
enum TUFHashes {
    static func parse(_ fields: TUFFields?) throws(TUFError) -> [String: [UInt8]] {
        guard let fields else { return [:] }
        var out: [String: [UInt8]] = [:]
        for (name, _) in fields.members { out[name] = try fields.hex(name) }
        return out
    }

    /// Throws `hash` unless every known algorithm's digest matches (and, when hashes are given, one is known).
    static func verify(_ hashes: [String: [UInt8]], _ bytes: [UInt8], role: String) throws(TUFError) {
        guard !hashes.isEmpty else { return }
        var checked = 0
        for (name, expected) in hashes.sorted(by: { $0.key < $1.key }) {
            let actual: [UInt8]
            switch name {
            case "sha256": actual = Array(SHA256.hash(data: bytes))
            case "sha512": actual = Array(SHA512.hash(data: bytes))
            default: continue
            }
            checked += 1
            guard actual == expected else {
                throw TUFError(
                    .hash, role: role, "\(name) is \(TUFHex.encode(actual)), \(TUFHex.encode(expected)) promised")
            }
        }
        guard checked > 0 else {
            throw TUFError(
                .hash, role: role, "no hash this client computes (sha256, sha512) among \(hashes.keys.sorted())")
        }
    }
}
