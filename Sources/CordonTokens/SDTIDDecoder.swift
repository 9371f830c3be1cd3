/// Checks an SDTID file's MACs and decrypts its seed (the algorithm as stoken documents it; see
/// docs/ARCHITECTURE.md, "Tokens").
public enum SDTIDDecoder {
    private static let batchMACIV: [UInt8] = [
        0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c,
    ]
    private static let tokenMACIV: [UInt8] = [
        0x1b, 0xb6, 0x7a, 0xe8, 0x58, 0x4c, 0xaa, 0x73, 0xb2, 0x57, 0x42, 0xd7, 0x07, 0x8b, 0x83, 0xb8,
    ]
    private static let tokenEncryptIV: [UInt8] = [
        0x16, 0xa0, 0x9e, 0x66, 0x7f, 0x3b, 0xcc, 0x90, 0x8b, 0x2f, 0xb1, 0x36, 0x6e, 0xa9, 0x57, 0xd3,
    ]
    private static let maximumHashData = 65_536

    /// Whether the file needs a password (its MACs do not check with the default key).
    public static func needsPassword(_ file: SDTIDFile) -> Bool {
        do {
            _ = try decrypt(file, password: nil, deviceID: nil)
            return false
        } catch {
            return error == .passwordRequired
        }
    }

    /// The decrypted token. A password is used only when the file's default key does not check;
    /// `deviceID` is compared with the file's `DeviceSerialNumber` when it has one.
    public static func decrypt(_ file: SDTIDFile, password: String?, deviceID: String?) throws(TokenFormatError)
        -> SecurIDToken
    {
        do {
            return try decrypt(file, usingPassword: nil, deviceID: deviceID)
        } catch .passwordRequired {
            guard let password, !password.isEmpty else { throw .passwordRequired }
            return try decrypt(file, usingPassword: password, deviceID: deviceID)
        }
    }

    private static func decrypt(_ file: SDTIDFile, usingPassword password: String?, deviceID: String?)
        throws(TokenFormatError)
        -> SecurIDToken
    {
        let serial = try file.serial()
        let serialText = try file.string("SN")
        var flags: UInt16 = 0
        if try file.integer("TimeDerivedSeeds", default: 0) != 0 { flags |= SecurIDToken.Flag.timeSeeds }
        if try file.integer("AppDerivedSeeds", default: 0) != 0 { flags |= SecurIDToken.Flag.appSeeds }
        if try file.integer("Mode", default: 0) != 0 { flags |= SecurIDToken.Flag.feature4 }
        if try file.integer("Alg", default: 0) != 0 { flags |= SecurIDToken.Flag.bit128 }
        let pinBits =
            (try file.integer("AddPIN", default: 0) != 0 ? 2 : 0)
            | (try file.integer("LocalPIN", default: 0) != 0 ? 1 : 0)
        flags |= UInt16(pinBits) << SecurIDToken.Flag.pinModeShift
        let digits = try file.integer("Digits", default: 6)
        guard (1...8).contains(digits) else { throw .invalidField(field: "Digits", reason: "\(digits) is not 1…8") }
        flags |= UInt16(digits - 1) << SecurIDToken.Flag.digitShift
        let interval = try file.integer("Interval", default: 60)
        guard interval == 30 || interval == 60 else {
            throw .invalidField(field: "Interval", reason: "\(interval) is not 30 or 60")
        }
        if interval == 60 { flags |= 1 }
        let expiryDays = try file.day("Death")
        let keypad = try file.integer("Keypad", default: 1) != 0

        let bound = file.lookup("DeviceSerialNumber")?.trimmingWhitespace() ?? ""
        if !bound.isEmpty {
            guard let deviceID, !deviceID.isEmpty else { throw .deviceIDRequired }
            guard SecurIDDecoder.scrubbedDeviceID(deviceID) == SecurIDDecoder.scrubbedDeviceID(bound) else {
                throw .wrongDevice
            }
            flags |= SecurIDToken.Flag.deviceProtected
        }

        let origin = try file.string("Origin")
        let destination = try file.string("Dest")
        let name = try file.string("Name")
        let secret = try base64Field(file, "Secret", skipFirst: false)
        let passwordBytes = password.map { Array($0.utf8) }
        if let passwordBytes, passwordBytes.count > SecurIDDecoder.maximumPasswordLength {
            throw .invalidField(field: "password", reason: "it is longer than 40 bytes")
        }
        let key0 = hashPassword(
            passwordBytes ?? Array(origin.utf8), salt0: Array(destination.utf8), salt1: Array(name.utf8))
        var secretBlock = padded(Array("Secret".utf8), 8) + padded(Array(name.utf8), 8)
        secretBlock = xor(SecurIDCrypto.encrypt(secretBlock, key: key0), secret)
        let key1 = secretBlock
        let batchMACKey = calcKey("BatchMAC", name, key: key1, iv: batchMACIV)
        let tokenMACKey = calcKey("TokenMAC", serialText, key: key1, iv: tokenMACIV)
        let tokenEncryptKey = calcKey("TokenEncrypt", serialText, key: key1, iv: tokenEncryptIV)

        let encryptedSeed = try base64Field(file, "Seed", skipFirst: true)
        let headerMAC = try base64Field(file, "HeaderMAC", skipFirst: false)
        let tokenMAC = try base64Field(file, "TokenMAC", skipFirst: false)
        let headerPassed = try hashSection(file.header, key: batchMACKey, iv: batchMACIV) == headerMAC
        let tokenPassed = try hashSection(file.token, key: tokenMACKey, iv: tokenMACIV) == tokenMAC
        if !headerPassed, !tokenPassed { throw password == nil ? .passwordRequired : .wrongPassword }
        if !headerPassed { throw .checksumMismatch(field: "HeaderMAC") }
        if !tokenPassed { throw .checksumMismatch(field: "TokenMAC") }
        if password != nil { flags |= SecurIDToken.Flag.passwordProtected }

        let seedBlock = padded(Array(serialText.utf8.prefix(8)), 8) + padded(Array("Seed".utf8), 8)
        let seed = xor(SecurIDCrypto.encrypt(seedBlock, key: tokenEncryptKey), encryptedSeed)
        return SecurIDToken.fromFlags(serial: serial, seed: seed, flags: flags, expiryDays: expiryDays, keypad: keypad)
    }

    private static func base64Field(_ file: SDTIDFile, _ name: String, skipFirst: Bool) throws(TokenFormatError)
        -> [UInt8]
    {
        guard var text = file.lookup(name) else {
            throw .invalidField(field: name, reason: "the file has no <\(name)>")
        }
        if skipFirst, !text.isEmpty { text.removeFirst() }  // <Seed> starts with a throw-away character
        let bytes = try Base64.decode(text.trimmingWhitespace(), field: name)
        guard bytes.count == 16 else { throw .invalidField(field: name, reason: "it is not 16 bytes") }
        return bytes
    }

    private static func padded(_ bytes: [UInt8], _ count: Int) -> [UInt8] {
        Array(bytes.prefix(count)) + [UInt8](repeating: 0, count: max(0, count - bytes.count))
    }

    private static func xor(_ left: [UInt8], _ right: [UInt8]) -> [UInt8] { zip(left, right).map { $0 ^ $1 } }

    /// CBC-MAC style chain: `result = AES(key, result ^ block)` from `iv`, the last block zero-padded.
    static func cbcHash(key: [UInt8], iv: [UInt8], data: ArraySlice<UInt8>) -> [UInt8] {
        var result = iv
        var offset = data.startIndex
        while offset < data.endIndex {
            let block = padded(Array(data[offset..<min(offset + 16, data.endIndex)]), 16)
            result = SecurIDCrypto.encrypt(xor(result, block), key: key)
            offset += 16
        }
        return result
    }

    private static func hashPassword(_ password: [UInt8], salt0: [UInt8], salt1: [UInt8]) -> [UInt8] {
        let key = padded(salt1, 16)
        var data = padded(password, 0x20) + padded(salt0, 0x20) + [UInt8](repeating: 0, count: 0x10)
        var result = [UInt8](repeating: 0, count: 16)
        let zero = [UInt8](repeating: 0, count: 16)
        for round in 0..<1000 {
            data[0x4f] = UInt8(round & 0xff)
            data[0x4e] = UInt8(round >> 8)
            result = xor(result, cbcHash(key: key, iv: zero, data: data[...]))
        }
        return result
    }

    private static func calcKey(_ label: String, _ value: String, key: [UInt8], iv: [UInt8]) -> [UInt8] {
        let buffer = padded(Array(label.utf8), 0x20) + padded(Array(value.utf8), 0x20)
        return cbcHash(key: key, iv: iv, data: buffer[...])
    }

    /// The MAC of a section: each leaf as `Path.To.Name value\n` (MAC fields skipped), with RSA's
    /// odd zero padding between entries, then `cbcHash`.
    static func hashSection(_ section: XMLElement, key: [UInt8], iv: [UInt8]) throws(TokenFormatError) -> [UInt8] {
        var data = [UInt8](repeating: 0, count: maximumHashData)
        var position = 0
        var padding = 0
        func walk(_ element: XMLElement, prefix: String) throws(TokenFormatError) {
            for child in element.children {
                if child.name.count > 3, child.name.hasSuffix("MAC") { continue }
                let path = "\(prefix).\(child.name)"
                if !child.children.isEmpty {
                    try walk(child, prefix: path)
                    continue
                }
                let value = child.allText
                let line = Array((value.isEmpty ? "\(path) </\(child.name)>\n" : "\(path) \(value)\n").utf8)
                guard position + line.count < maximumHashData else {
                    throw .invalidField(field: section.name, reason: "the section is too large to check")
                }
                // stoken's "bug compatibility": a short non-empty line (with the pending padding, at
                // most 16 bytes) is written again at the start of the current block, and the padding
                // after it zeroed.
                if !value.isEmpty, line.count + padding <= 16 {
                    position &= ~0xf
                    let end = min(position + line.count + padding, maximumHashData)
                    data.replaceSubrange(position..<end, with: [UInt8](repeating: 0, count: end - position))
                }
                data.replaceSubrange(position..<position + line.count, with: line)
                position += line.count + padding
                padding = position & 0xf == 0 ? 0x10 : position & 0xf
                if position >= maximumHashData {
                    throw .invalidField(field: section.name, reason: "the section is too large to check")
                }
            }
        }
        try walk(section, prefix: section.name)
        return cbcHash(key: key, iv: iv, data: data[0..<position])
    }
}
