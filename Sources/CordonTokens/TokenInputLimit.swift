/// The one limit of a token import: 16 KiB of UTF-8 (`TokenImportParameters.maximumDataBytes` on
/// the wire, which the CLI checks before sending). An SDTID file or a Google Authenticator QR code
/// is a few KiB; twice this, the worst JSON escaping of text without control characters, fits one
/// 64 KiB varlink message with room for the other parameters (docs/components/tokens.md).
public enum TokenInputLimit {
    /// The most an import (and so any one of its parsers) reads, in bytes.
    public static let bytes = 16 * 1024
}
