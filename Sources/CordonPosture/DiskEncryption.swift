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
        if let crypt = cryptLayer(under: device, depth: 0) {
            return PostureResult(.diskEncryption, .pass, "/ is on \(mount.source): dm-crypt (\(crypt))")
        }
        return PostureResult(.diskEncryption, .fail, "/ is on \(mount.source) (\(mount.device)), not on dm-crypt")
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

    /// The `dm/uuid` of the first dm-crypt layer at or below `directory`, or nil.
    func cryptLayer(under directory: String, depth: Int) -> String? {
        guard depth < Self.maximumDepth else { return nil }
        if let uuid = probe.read(directory + "/dm/uuid")?.trimmingCharacters(in: .whitespacesAndNewlines),
            uuid.hasPrefix("CRYPT-")
        {
            return uuid
        }
        for slave in probe.list(directory + "/slaves") {
            if let crypt = cryptLayer(under: directory + "/slaves/" + slave, depth: depth + 1) { return crypt }
        }
        return nil
    }
}
