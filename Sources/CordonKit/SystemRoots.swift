import CordonLocking
import X509

/// The system's roots, parsed once per bundle path (docs/ARCHITECTURE.md, "Pinned channel").
enum SystemRoots {
    static let cache = Locked<[String: [Certificate]]>([:])
}
