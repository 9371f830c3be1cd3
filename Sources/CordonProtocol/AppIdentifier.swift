/// Validates app ids: reverse-DNS style names.
public enum AppIdentifier {
    /// The reason `appId` is not acceptable, or nil when it is.
    public static func problem(with appId: String) -> String? {
        if appId.isEmpty { return "the app id is empty" }
        if appId.utf8.count > 255 { return "the app id is longer than 255 bytes" }
        let allowed = appId.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                    || "._-".unicodeScalars.contains(scalar))
        }
        if !allowed { return "the app id may only contain ASCII letters, digits, '.', '_' and '-'" }
        if appId.hasPrefix(".") || appId.hasSuffix(".") || appId.contains("..") {
            return "the app id must be dot-separated names, e.g. com.example.notes"
        }
        return nil
    }
}
