/// How a SecurID token combines the user's PIN with its code.
public enum SecurIDPINMode: String, Sendable, Equatable, Codable {
    /// No PIN: the code alone.
    case pinless
    /// PINPad: each PIN digit is added (mod 10) into the code's last digits, as stoken does.
    case pinPad
    /// Key fob: the user types the PIN followed by the code; the passcode is PIN + code.
    case keyFob
}

/// A decrypted SecurID token: what the code algorithm needs, and its metadata.
public struct SecurIDToken: Sendable, Equatable {
    /// 12 decimal digits.
    public var serial: String
    /// The AES-128 seed (never logged).
    public var seed: [UInt8]
    /// 6 or 8 (any of 1…8 is computed).
    public var digits: Int
    /// 30 or 60 seconds.
    public var interval: Int
    public var pinMode: SecurIDPINMode
    /// The expiry as days after 2000-01-01; the token expires at 00:00:00 UTC of the day after.
    public var expiryDays: Int
    /// The v2 flag word (bits as stoken names them).
    public var flags: UInt16

    public init(
        serial: String, seed: [UInt8], digits: Int, interval: Int, pinMode: SecurIDPINMode, expiryDays: Int,
        flags: UInt16
    ) {
        self.serial = serial
        self.seed = seed
        self.digits = digits
        self.interval = interval
        self.pinMode = pinMode
        self.expiryDays = expiryDays
        self.flags = flags
    }

    /// 2000-01-01T00:00:00Z as a Unix time.
    public static let epoch: Int64 = 946_684_800

    /// The Unix time the token stops working: 00:00:00 UTC of its expiry date (as stoken shows it).
    public var expiry: Int64 { Self.epoch + Int64(expiryDays + 1) * 86_400 }

    /// The expiry date as `YYYY-MM-DD`.
    public var expiryDay: String { CivilDate(unixTime: expiry).description }

    /// Flag bits (stoken's names).
    enum Flag {
        static let bit128 = UInt16(1 << 14)
        static let passwordProtected = UInt16(1 << 13)
        static let deviceProtected = UInt16(1 << 12)
        static let appSeeds = UInt16(1 << 11)
        static let feature4 = UInt16(1 << 10)
        static let timeSeeds = UInt16(1 << 9)
        static let digitShift: UInt16 = 6
        static let digitMask = UInt16(0x07 << 6)
        static let pinModeShift: UInt16 = 3
        static let pinModeMask = UInt16(0x03 << 3)
        static let secondsMask = UInt16(0x03)
    }

    /// The token described by a flag word (digits, interval and PIN mode come from it).
    static func fromFlags(serial: String, seed: [UInt8], flags: UInt16, expiryDays: Int, keypad: Bool = true)
        -> SecurIDToken
    {
        let pinBits = (flags & Flag.pinModeMask) >> Flag.pinModeShift
        let pinMode: SecurIDPINMode = pinBits < 2 ? .pinless : (keypad ? .pinPad : .keyFob)
        return SecurIDToken(
            serial: serial, seed: seed, digits: Int((flags & Flag.digitMask) >> Flag.digitShift) + 1,
            interval: flags & Flag.secondsMask == 0 ? 30 : 60, pinMode: pinMode, expiryDays: expiryDays,
            flags: flags)
    }
}

/// A proleptic Gregorian date in UTC, computed without Foundation's calendars.
public struct CivilDate: Equatable, Sendable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date of a Unix time (UTC).
    public init(unixTime: Int64) {
        let days = Int(unixTime >= 0 ? unixTime / 86_400 : (unixTime - 86_399) / 86_400)
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        day = doy - (153 * mp + 2) / 5 + 1
        month = mp < 10 ? mp + 3 : mp - 9
        year = yoe + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// Days since 1970-01-01.
    public var daysSinceUnixEpoch: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    public var description: String {
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }
}
