/// Bech32 (BIP 173) as age uses it: no length limit on the data part, all upper or all lower
/// case, the checksum computed over the lower-case string.
public enum Bech32 {
    static let charset = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)

    static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 128)
        for (index, character) in charset.enumerated() { table[Int(character)] = Int8(index) }
        return table
    }()

    static func polymod(_ values: [UInt8]) -> UInt32 {
        let generator: [UInt32] = [0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3]
        var checksum: UInt32 = 1
        for value in values {
            let top = checksum >> 25
            checksum = (checksum & 0x1ff_ffff) << 5 ^ UInt32(value)
            for index in 0..<5 where (top >> UInt32(index)) & 1 == 1 { checksum ^= generator[index] }
        }
        return checksum
    }

    static func expand(_ hrp: [UInt8]) -> [UInt8] {
        hrp.map { $0 >> 5 } + [0] + hrp.map { $0 & 31 }
    }

    /// Regroups bits from `from`-bit to `to`-bit groups; nil when `pad` is false and the input
    /// leaves non-zero or too many bits.
    static func convertBits(_ data: [UInt8], from: Int, to: Int, pad: Bool) -> [UInt8]? {
        var accumulator = 0
        var bits = 0
        var output: [UInt8] = []
        let maximum = (1 << to) - 1
        for value in data {
            accumulator = (accumulator << from | Int(value)) & 0xFFFF
            bits += from
            while bits >= to {
                bits -= to
                output.append(UInt8((accumulator >> bits) & maximum))
            }
        }
        if pad {
            if bits > 0 { output.append(UInt8((accumulator << (to - bits)) & maximum)) }
        } else if bits >= from || (accumulator << (to - bits)) & maximum != 0 {
            return nil
        }
        return output
    }

    /// Encodes `data` under the human-readable part `hrp`; upper case when `hrp` is.
    public static func encode(hrp: String, data: [UInt8]) -> String {
        let upper = hrp.uppercased() == hrp && hrp.lowercased() != hrp
        let lowerHRP = Array(hrp.lowercased().utf8)
        let groups = convertBits(data, from: 8, to: 5, pad: true) ?? []
        let checksum = polymod(expand(lowerHRP) + groups + [0, 0, 0, 0, 0, 0]) ^ 1
        var output = lowerHRP + [0x31]
        output += groups.map { charset[Int($0)] }
        output += (0..<6).map { charset[Int((checksum >> UInt32(5 * (5 - $0))) & 31)] }
        let text = String(decoding: output, as: UTF8.self)
        return upper ? text.uppercased() : text
    }

    /// Decodes a Bech32 string into its lower-case human-readable part and data bytes.
    public static func decode(_ text: String) throws(AgeError) -> (hrp: String, data: [UInt8]) {
        let bytes = Array(text.utf8)
        guard bytes.allSatisfy({ $0 >= 33 && $0 <= 126 }) else {
            throw .invalidKey("a character outside printable ASCII")
        }
        let lower = text.lowercased()
        guard lower == text || text.uppercased() == text else { throw .invalidKey("mixed upper and lower case") }
        let lowered = Array(lower.utf8)
        guard let separator = lowered.lastIndex(of: 0x31), separator >= 1, lowered.count - separator - 1 >= 6 else {
            throw .invalidKey("no '1' separator or a checksum too short")
        }
        let hrp = Array(lowered[..<separator])
        var groups: [UInt8] = []
        for character in lowered[(separator + 1)...] {
            let value = values[Int(character)]
            guard value >= 0 else { throw .invalidKey("'\(Character(Unicode.Scalar(character)))' is not Bech32") }
            groups.append(UInt8(value))
        }
        guard polymod(expand(hrp) + groups) == 1 else { throw .invalidKey("the Bech32 checksum does not match") }
        guard let data = convertBits(Array(groups.dropLast(6)), from: 5, to: 8, pad: false) else {
            throw .invalidKey("the data part has invalid padding")
        }
        return (String(decoding: hrp, as: UTF8.self), data)
    }
}
