import CCordonLinux

#if canImport(Glibc)
    import Glibc
#endif

/// Secret bytes in locked memory: `mlock`ed, excluded from core dumps, zeroed when dropped.
///
/// The buffer is never copied by value; `zero()` can also be called early (on revocation).
public final class SecureBytes: @unchecked Sendable {
    private let pointer: UnsafeMutableRawPointer
    /// The number of bytes.
    public let count: Int
    /// Whether `mlock` succeeded (it can fail under a low `RLIMIT_MEMLOCK`).
    public let isLocked: Bool
    private var zeroed = false

    /// Allocates `count` zero bytes in locked memory.
    public init(count: Int) {
        precondition(count > 0, "SecureBytes needs a positive size")
        self.count = count
        // Page-aligned so MADV_DONTDUMP covers exactly this allocation.
        var raw: UnsafeMutableRawPointer?
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let size = ((count + page - 1) / page) * page
        guard posix_memalign(&raw, page, size) == 0, let raw else { fatalError("out of memory") }
        pointer = raw
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: count)
        isLocked = cordon_protect_memory(pointer, count) == 0
    }

    /// Copies `bytes` into locked memory. The caller should zero its own copy.
    public convenience init<Bytes: Collection>(copying bytes: Bytes) where Bytes.Element == UInt8 {
        self.init(count: max(bytes.count, 1))
        let copied: Bool? = bytes.withContiguousStorageIfAvailable { source in
            if let base = source.baseAddress { pointer.copyMemory(from: base, byteCount: source.count) }
            return true
        }
        if copied != nil { return }
        var index = 0
        for byte in bytes {
            pointer.storeBytes(of: byte, toByteOffset: index, as: UInt8.self)
            index += 1
        }
    }

    /// Fills the buffer from `fill`, e.g. a random number generator.
    public convenience init(count: Int, fill: (UnsafeMutableRawBufferPointer) -> Void) {
        self.init(count: count)
        fill(UnsafeMutableRawBufferPointer(start: pointer, count: count))
    }

    deinit {
        zero()
        cordon_unprotect_memory(pointer, count)
        free(pointer)
    }

    /// Overwrites the bytes with zeros; later reads see zeros.
    public func zero() {
        guard !zeroed else { return }
        cordon_secure_zero(pointer, count)
        zeroed = true
    }

    /// Whether `zero()` has run.
    public var isZeroed: Bool { zeroed }

    /// Gives read access to the bytes.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}
