import CordonProtocol

/// Whether the root file system sits on dm-crypt: the device `/` is mounted from (its
/// `/proc/self/mountinfo` line), then its device-mapper stack in sysfs (`dm/uuid` starting with
/// `CRYPT-`, following `slaves/` through LVM and the like).
struct DiskEncryption {
    let probe: PostureProbe
    /// How deep a device stack is followed.
    static let maximumDepth = 8

    func result() -> PostureResult {
        guard let mountinfo = probe.read("/proc/self/mountinfo") else {
            return PostureResult(.diskEncryption, .unknown, "/proc/self/mountinfo is not readable")
        }
        guard let mount = Self.rootMount(in: mountinfo) else {
            return PostureResult(.diskEncryption, .unknown, "no mount of / in /proc/self/mountinfo")
        }
        guard let device = sysfsDirectory(of: mount) else {
            return PostureResult(
                .diskEncryption, .unknown,
                "/ is mounted from \(mount.source) (\(mount.device)), which sysfs does not describe")
        }
        switch cryptLayer(under: device, depth: 0) {
        case .crypt(let uuid):
            return PostureResult(.diskEncryption, .pass, "/ is on \(mount.source): dm-crypt (\(uuid))")
        case .unreadable(let path):
            // A layer that cannot be read may be the dm-crypt one: no evidence either way.
            return PostureResult(
                .diskEncryption, .unknown, "/ is on \(mount.source) (\(mount.device)), but \(path) cannot be read")
        case .noCrypt:
            return PostureResult(
                .diskEncryption, .fail, "/ is on \(mount.source) (\(mount.device)), not on dm-crypt")
        }
    }

    /// What the stack under a device holds.
    enum Layer: Equatable {
        /// A dm-crypt layer, with its `dm/uuid`.
        case crypt(String)
        /// No dm-crypt layer: every layer was read.
        case noCrypt
        /// A file or directory of the stack exists and cannot be read (permission, garbled).
        case unreadable(String)
    }

    struct RootMount {
        var device: String
        var source: String
    }

    /// The last mount of `/` (the one in effect): its `major:minor` and its source.
    static func rootMount(in mountinfo: String) -> RootMount? {
        var found: RootMount?
        for line in mountinfo.split(separator: "\n") {
            let halves = line.components(separatedBy: " - ")
            let fields = halves[0].split(separator: " ")
            guard halves.count == 2, fields.count >= 5, fields[4] == "/" else { continue }
            let tail = halves[1].split(separator: " ")
            found = RootMount(device: String(fields[2]), source: tail.count > 1 ? String(tail[1]) : "?")
        }
        return found
    }

    /// The sysfs directory of the mount's block device: by number, or (a file system on an
    /// anonymous device, as btrfs shows) by the source's name.
    func sysfsDirectory(of mount: RootMount) -> String? {
        if !mount.device.hasPrefix("0:") {
            let path = "/sys/dev/block/" + mount.device
            return probe.exists(path) ? path : nil
        }
        guard mount.source.hasPrefix("/dev/") else { return nil }
        let name = String(mount.source.split(separator: "/").last ?? "")
        if mount.source.hasPrefix("/dev/mapper/") {
            for index in 0..<256 {
                let candidate = "/sys/block/dm-\(index)"
                guard probe.exists(candidate) else { continue }
                if probe.read(candidate + "/dm/name")?.trimmingCharacters(in: .whitespacesAndNewlines) == name {
                    return candidate
                }
            }
            return nil
        }
        let path = "/sys/class/block/" + name
        return probe.exists(path) ? path : nil
    }

    /// The first dm-crypt layer at or below `directory` (its `dm/uuid`); `unreadable` when one
    /// that might be it cannot be read and none is found.
    func cryptLayer(under directory: String, depth: Int) -> Layer {
        guard depth < Self.maximumDepth else { return .unreadable(directory + " (a stack deeper than 8)") }
        var unreadable: String?
        let uuidPath = directory + "/dm/uuid"
        if let uuid = probe.read(uuidPath)?.trimmingCharacters(in: .whitespacesAndNewlines) {
            if uuid.hasPrefix("CRYPT-") { return .crypt(uuid) }
        } else if probe.exists(uuidPath) {
            unreadable = uuidPath
        }
        let slaves = directory + "/slaves"
        if let names = probe.listing(slaves) {
            for slave in names {
                switch cryptLayer(under: slaves + "/" + slave, depth: depth + 1) {
                case .crypt(let uuid): return .crypt(uuid)
                case .unreadable(let path): unreadable = unreadable ?? path
                case .noCrypt: break
                }
            }
        } else if probe.exists(slaves) {
            unreadable = unreadable ?? slaves
        }
        return unreadable.map(Layer.unreadable) ?? .noCrypt
    }
}
