import Crypto

/// The per-app, per-device binding id: derived from the machine id the way systemd's
/// `sd_id128_get_machine_app_specific` does (HMAC-SHA256 keyed by the machine id over the app id,
/// first 16 bytes, then the UUID v4 version and variant bits). Stable for an app on one machine,
/// unrelated on another, and it does not reveal the machine id.
public enum BindingID {
    /// The 16-byte binding id of `appID` on the machine `machineID` (both 16 bytes).
    public static func derive(machineID: [UInt8], appID: [UInt8]) -> [UInt8] {
        var id = Array(
            HMAC<SHA256>.authenticationCode(for: appID, using: SymmetricKey(data: machineID)).prefix(16))
        id[6] = (id[6] & 0x0f) | 0x40
        id[8] = (id[8] & 0x3f) | 0x80
        return id
    }

    /// A Cordon app id (a reverse-DNS name) as the 16-byte application id `derive` takes: the first
    /// 16 bytes of SHA-256 over `cordon.tokens:` and the name.
    public static func applicationID(for name: String) -> [UInt8] {
        Array(SHA256.hash(data: Array("cordon.tokens:\(name)".utf8)).prefix(16))
    }

    /// Parses a machine id as `/etc/machine-id` holds it (32 hex digits).
    public static func parseMachineID(_ text: String) throws(TokenFormatError) -> [UInt8] {
        let hex = Array(text.trimmingWhitespace().utf8)
        guard hex.count == 32 else {
            throw .invalidField(field: "machine-id", reason: "a machine id is 32 hex digits")
        }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: 32, by: 2) {
            guard let high = PercentEncoding.hexValue(hex[index]), let low = PercentEncoding.hexValue(hex[index + 1])
            else { throw .invalidField(field: "machine-id", reason: "a machine id is 32 hex digits") }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    /// 32 lower-case hex digits (the form `systemd-id128` prints and SecurID device ids accept).
    public static func hex(_ id: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".unicodeScalars)
        var text = ""
        for byte in id {
            text.unicodeScalars.append(digits[Int(byte >> 4)])
            text.unicodeScalars.append(digits[Int(byte & 0xf)])
        }
        return text
    }
}
