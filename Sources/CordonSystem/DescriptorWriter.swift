#if canImport(Glibc)
    import Glibc
#endif

/// Writes a whole buffer to a descriptor: short writes continued, interrupted calls retried.
public enum DescriptorWriter {
    /// Writes all of `bytes` to `descriptor`; false (with `errno` set) when a write fails.
    public static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return true }
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
    }
}
