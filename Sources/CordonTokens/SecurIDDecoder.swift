/// Checks and decrypts a CTF token with its optional password and device id (the algorithm as
/// stoken documents it; see docs/ARCHITECTURE.md, "Tokens").
public enum SecurIDDecoder {
    /// The longest password the formats carry.
    public static let maximumPasswordLength = 40
    private static let magic: [UInt8] = [0xd8, 0xf5, 0x32, 0x53, 0x82, 0x89]
    private static let v3DeviceLength = 48

    /// Decrypts `token`. A password or device id the token does not need is ignored.
    public static func decrypt(_ token: SecurIDEncodedToken, password: String?, deviceID: String?)
        throws(TokenFormatError) -> SecurIDToken
    {
        switch token {
        case .numeric(let numeric): return try decryptNumeric(numeric, password: password, deviceID: deviceID)
        case .binary(let binary): return try decryptBinary(binary, password: password, deviceID: deviceID)
        }
    }

    /// Whether the token needs a password, and a device id, to decrypt.
    public static func requirements(_ token: SecurIDEncodedToken) -> (password: Bool, deviceID: Bool) {
        switch token {
        case .numeric(let numeric):
            (
                numeric.flags & SecurIDToken.Flag.passwordProtected != 0,
                numeric.flags & SecurIDToken.Flag.deviceProtected != 0
            )
        case .binary(let binary): (binary.passwordLocked, binary.deviceLocked)
        }
    }

    private static func checkedSecrets(
        passwordLocked: Bool, deviceLocked: Bool, password: String?, deviceID: String?
    ) throws(TokenFormatError) -> (password: [UInt8]?, deviceID: String?) {
        var pass: [UInt8]?
        if passwordLocked {
            guard let password, !password.isEmpty else { throw .passwordRequired }
            guard password.utf8.count <= maximumPasswordLength else {
                throw .invalidField(field: "password", reason: "it is longer than \(maximumPasswordLength) bytes")
            }
            pass = Array(password.utf8)
        }
        var device: String?
        if deviceLocked {
            guard let deviceID, !deviceID.isEmpty else { throw .deviceIDRequired }
            device = deviceID
        }
        return (pass, device)
    }

    /// What a failed check means: the password when one was given, else the device, else the data.
    private static func failure(password: [UInt8]?, deviceID: String?) -> TokenFormatError {
        if password != nil { return .wrongPassword }
        if deviceID != nil { return .wrongDevice }
        return .checksumMismatch(field: "ctfData")
    }

    // MARK: v1/v2

    private static func decryptNumeric(_ token: SecurIDNumericToken, password: String?, deviceID: String?)
        throws(TokenFormatError) -> SecurIDToken
    {
        let ascii = token.digits.map { $0 + UInt8(ascii: "0") }
        guard SecurIDCrypto.shortMAC(Array(ascii[0..<(ascii.count - 5)])) == token.checksum else {
            throw .checksumMismatch(field: "ctfData")
        }
        let secrets = try checkedSecrets(
            passwordLocked: token.flags & SecurIDToken.Flag.passwordProtected != 0,
            deviceLocked: token.flags & SecurIDToken.Flag.deviceProtected != 0, password: password,
            deviceID: deviceID)
        let (keyHash, deviceHash) = numericKey(
            password: secrets.password, deviceID: secrets.deviceID, version: token.version,
            isSmartphone: token.isSmartphone)
        if token.flags & SecurIDToken.Flag.deviceProtected != 0, deviceHash != token.deviceIDHash {
            throw .wrongDevice
        }
        let seed = SecurIDCrypto.decrypt(token.encryptedSeed, key: keyHash)
        guard SecurIDCrypto.shortMAC(seed) == token.seedHash else {
            throw failure(password: secrets.password, deviceID: secrets.deviceID)
        }
        return SecurIDToken.fromFlags(
            serial: token.serial, seed: seed, flags: token.flags, expiryDays: Int(token.expiryDays))
    }

    /// The AES key of a v2 seed and the short hash of the device id.
    static func numericKey(password: [UInt8]?, deviceID: String?, version: Int, isSmartphone: Bool)
        -> (key: [UInt8], deviceHash: UInt16)
    {
        let deviceLength = isSmartphone ? 40 : 32
        var key = password ?? []
        let deviceStart = key.count
        var taken = 0
        for character in (deviceID ?? "").utf8 {
            taken += 1
            if taken > deviceLength { break }
            let isDigit = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(character)
            let isHex =
                isDigit || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(character)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(character)
            if (version == 1 && isDigit) || (version >= 2 && !isHex) { continue }
            key.append((UInt8(ascii: "a")...UInt8(ascii: "z")).contains(character) ? character - 32 : character)
        }
        var deviceBuffer = Array(key[deviceStart...])
        deviceBuffer += [UInt8](repeating: 0, count: max(0, deviceLength - deviceBuffer.count))
        let deviceHash = SecurIDCrypto.shortMAC(Array(deviceBuffer.prefix(deviceLength)))
        return (SecurIDCrypto.mac(key + magic), deviceHash)
    }

    // MARK: v3/v4

    private static func decryptBinary(_ token: SecurIDBinaryToken, password: String?, deviceID: String?)
        throws(TokenFormatError) -> SecurIDToken
    {
        let secrets = try checkedSecrets(
            passwordLocked: token.passwordLocked, deviceLocked: token.deviceLocked, password: password,
            deviceID: deviceID)
        let device = scrubbedDeviceID(secrets.deviceID)
        guard binaryHash(password: nil, device: device, nonce: token.nonce)[...] == token.nonceDeviceHash else {
            throw .wrongDevice
        }
        guard
            binaryHash(password: secrets.password, device: device, nonce: token.nonce)[...]
                == token.nonceDevicePasswordHash
        else {
            throw failure(password: secrets.password, deviceID: secrets.deviceID)
        }
        let macKey = binaryKey(
            version: token.version, password: secrets.password, device: device, nonce: token.nonce, keyID: 0)
        guard SecurIDCrypto.hmacSHA256(key: macKey, token.bytes[0..<259])[...] == token.mac else {
            throw .checksumMismatch(field: "ctfData")
        }
        let key = binaryKey(
            version: token.version, password: secrets.password, device: device, nonce: token.nonce, keyID: 1)
        guard let payload = SecurIDCrypto.decryptCBC(token.encryptedPayload, key: key, iv: token.nonce) else {
            throw .checksumMismatch(field: "ctfData")
        }
        let serialBytes = payload[0..<12].prefix(while: { $0 != 0 })
        guard serialBytes.count == 12, serialBytes.allSatisfy({ (48...57).contains($0) }) else {
            throw .invalidField(field: "serial", reason: "the decrypted serial is not 12 digits")
        }
        let mode = payload[34]
        let digits = payload[35]
        let addPIN = payload[36]
        let interval = payload[37]
        guard (1...8).contains(digits), interval == 30 || interval == 60 else {
            throw .invalidField(field: "ctfData", reason: "the decrypted digits or interval are out of range")
        }
        var flags = SecurIDToken.Flag.timeSeeds | SecurIDToken.Flag.bit128
        if token.passwordLocked { flags |= SecurIDToken.Flag.passwordProtected }
        if token.deviceLocked { flags |= SecurIDToken.Flag.deviceProtected }
        if mode != 0 { flags |= SecurIDToken.Flag.feature4 }
        flags |= (UInt16(digits - 1) << SecurIDToken.Flag.digitShift) & SecurIDToken.Flag.digitMask
        if addPIN != 0x1f { flags |= 2 << SecurIDToken.Flag.pinModeShift }
        if interval == 60 { flags |= 1 }
        let ticks = payload[48..<53].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let expiryDays = Int(ticks / 337_500) - Int(SecurIDToken.epoch / 86_400)
        return SecurIDToken.fromFlags(
            serial: String(decoding: serialBytes, as: UTF8.self), seed: Array(payload[16..<32]), flags: flags,
            expiryDays: expiryDays)
    }

    /// Letters and digits of the device id, upper-cased, at most 48.
    static func scrubbedDeviceID(_ deviceID: String?) -> [UInt8] {
        var output: [UInt8] = []
        for character in (deviceID ?? "").utf8 where output.count < v3DeviceLength {
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"): output.append(character)
            case UInt8(ascii: "a")...UInt8(ascii: "z"): output.append(character - 32)
            default: continue
            }
        }
        return output
    }

    static func binaryHash(password: [UInt8]?, device: [UInt8], nonce: ArraySlice<UInt8>) -> [UInt8] {
        var buffer = Array(nonce)
        buffer += device + [UInt8](repeating: 0, count: v3DeviceLength - device.count)
        buffer += password ?? []
        return SecurIDCrypto.sha256(buffer)
    }

    /// The v3 key is PBKDF2 over every second byte of its input (as RSA's software does); v4 over all of it.
    static func binaryKey(version: Int, password: [UInt8]?, device: [UInt8], nonce: ArraySlice<UInt8>, keyID: Int)
        -> [UInt8]
    {
        let constants: [[UInt8]] = [
            [0xd0, 0x14, 0x43, 0x3c, 0x6d, 0x17, 0x9f, 0xeb, 0xda, 0x09, 0xab, 0xfc, 0x32, 0x49, 0x63, 0x4c],
            [0x3b, 0xaf, 0xff, 0x4d, 0x91, 0x8d, 0x89, 0xb6, 0x81, 0x60, 0xde, 0x44, 0x4e, 0x05, 0xc0, 0xdd],
        ]
        var buffer = password ?? []
        buffer += device + [UInt8](repeating: 0, count: v3DeviceLength - device.count)
        buffer += constants[keyID]
        buffer += nonce
        if version == 3 {
            buffer = stride(from: 1, to: buffer.count, by: 2).map { buffer[$0] }
        }
        return SecurIDCrypto.pbkdf2(password: buffer, salt: nonce, rounds: 1000)
    }
}
