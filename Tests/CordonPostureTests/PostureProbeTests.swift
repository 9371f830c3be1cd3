import CordonPosture
import CordonProtocol
import Foundation
import Testing

@Suite struct PostureProbeTests {
    static let secureBoot = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e00e98032b8c"

    @Test func secureBootReadsTheEFIVariable() throws {
        let fixture = try PostureFixture()
        try fixture.write(Self.secureBoot, [0x06, 0, 0, 0, 1])
        #expect(fixture.probe().run(.secureBoot) == PostureResult(.secureBoot, .pass, "SecureBoot EFI variable: 1"))
        try fixture.write(Self.secureBoot, [0x06, 0, 0, 0, 0])
        #expect(fixture.probe().run(.secureBoot).status == .fail)
        try fixture.write(Self.secureBoot, [0x06, 0])
        #expect(fixture.probe().run(.secureBoot).status == .unknown, "a truncated variable is not an answer")
    }

    @Test func secureBootWithoutUEFIFailsAndWithoutSysfsIsUnknown() throws {
        let fixture = try PostureFixture()
        #expect(fixture.probe().run(.secureBoot).status == .unknown)
        try fixture.directory("/sys/firmware/acpi")
        let bios = fixture.probe().run(.secureBoot)
        #expect(bios.status == .fail)
        #expect(bios.evidence.contains("without UEFI"))
        try fixture.directory("/sys/firmware/efi")
        #expect(fixture.probe().run(.secureBoot).status == .unknown)
    }

    @Test func lockdownIsTheSelectedMode() throws {
        let fixture = try PostureFixture()
        #expect(fixture.probe().run(.kernelLockdown).status == .unknown)
        try fixture.write("/sys/kernel/security/lockdown", "[none] integrity confidentiality\n")
        #expect(fixture.probe().run(.kernelLockdown).status == .fail)
        try fixture.write("/sys/kernel/security/lockdown", "none [integrity] confidentiality\n")
        #expect(fixture.probe().run(.kernelLockdown).status == .pass)
        try fixture.write("/sys/kernel/security/lockdown", "garbage")
        #expect(fixture.probe().run(.kernelLockdown).status == .unknown)
    }

    @Test func rootOnLUKSUnderLVMPassesAndAPlainDiskFails() throws {
        let fixture = try PostureFixture()
        #expect(fixture.probe().run(.diskEncryption).status == .unknown, "no mountinfo")
        try fixture.write(
            "/proc/self/mountinfo",
            """
            22 27 0:21 / /proc rw,relatime - proc proc rw
            27 1 253:1 / / rw,relatime - ext4 /dev/mapper/vg-root rw
            """)
        // vg-root (253:1) is LVM on dm-0, which is dm-crypt on the disk's partition.
        try fixture.write("/sys/dev/block/253:1/dm/uuid", "LVM-abc\n")
        try fixture.write("/sys/dev/block/253:1/slaves/dm-0/dm/uuid", "CRYPT-LUKS2-0123-luks-root\n")
        try fixture.directory("/sys/dev/block/253:1/slaves/dm-0/slaves/nvme0n1p3")
        let luks = fixture.probe().run(.diskEncryption)
        #expect(luks.status == .pass, "\(luks)")
        #expect(luks.evidence == "/ is on /dev/mapper/vg-root: dm-crypt (CRYPT-LUKS2-0123-luks-root)")

        try fixture.write("/proc/self/mountinfo", "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n")
        try fixture.directory("/sys/dev/block/254:0")
        let plain = fixture.probe().run(.diskEncryption)
        #expect(plain == PostureResult(.diskEncryption, .fail, "/ is on /dev/vda (254:0), not on dm-crypt"))
    }

    @Test func btrfsOnAnAnonymousDeviceIsFoundByItsMapperName() throws {
        let fixture = try PostureFixture()
        try fixture.write("/proc/self/mountinfo", "27 1 0:31 /@ / rw - btrfs /dev/mapper/luks-root rw\n")
        try fixture.write("/sys/block/dm-0/dm/name", "luks-root\n")
        try fixture.write("/sys/block/dm-0/dm/uuid", "CRYPT-LUKS2-feed-luks-root\n")
        #expect(fixture.probe().run(.diskEncryption).status == .pass)
        try fixture.write("/proc/self/mountinfo", "27 1 0:31 / / rw - overlay overlay rw\n")
        #expect(fixture.probe().run(.diskEncryption).status == .unknown, "an overlay root is not a disk")
    }

    @Test func taintAndPtraceScope() throws {
        let fixture = try PostureFixture()
        #expect(fixture.probe().run(.kernelTaint).status == .unknown)
        try fixture.write("/proc/sys/kernel/tainted", "0\n")
        #expect(fixture.probe().run(.kernelTaint).status == .pass)
        try fixture.write("/proc/sys/kernel/tainted", "12289\n")
        let tainted = fixture.probe().run(.kernelTaint)
        #expect(tainted.status == .fail)
        #expect(tainted.evidence.contains("P: a proprietary module was loaded"))
        #expect(tainted.evidence.contains("O: an out-of-tree module was loaded"))
        #expect(tainted.evidence.contains("E: an unsigned module was loaded"))
        #expect(fixture.probe().run(.ptraceScope).status == .unknown, "no Yama")
        try fixture.write("/proc/sys/kernel/yama/ptrace_scope", "0\n")
        #expect(fixture.probe().run(.ptraceScope).status == .fail)
        try fixture.write("/proc/sys/kernel/yama/ptrace_scope", "1\n")
        #expect(fixture.probe().run(.ptraceScope).status == .pass)
    }

    @Test func versionsAgainstTheirMinimums() throws {
        let fixture = try PostureFixture()
        try fixture.write(
            "/etc/os-release", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\nVERSION_ID=\"12\"\n")
        try fixture.write("/proc/sys/kernel/osrelease", "6.18.44-fc-v657\n")
        let none = fixture.probe()
        #expect(none.run(.osVersion) == PostureResult(.osVersion, .pass, "debian 12 (no minimum set for debian)"))
        #expect(none.run(.kernelVersion).status == .pass)
        let strict = fixture.probe(minimums: PostureMinimums(osVersions: ["debian": "13"], kernel: "6.19"))
        #expect(strict.run(.osVersion) == PostureResult(.osVersion, .fail, "debian 12, minimum 13"))
        #expect(
            strict.run(.kernelVersion) == PostureResult(.kernelVersion, .fail, "kernel 6.18.44-fc-v657, minimum 6.19"))
        let met = fixture.probe(minimums: PostureMinimums(osVersions: ["debian": "11.8"], kernel: "6.1"))
        #expect(met.run(.osVersion).status == .pass)
        #expect(met.run(.kernelVersion).status == .pass)
    }

    @Test func screenLockComesFromTheDesktopSetting() throws {
        let fixture = try PostureFixture()
        #expect(fixture.probe().run(.screenLock).status == .unknown)
        #expect(fixture.probe(screenLock: "true\n", dconf: "true\n").run(.screenLock).status == .pass)
        #expect(fixture.probe(screenLock: "false\n", dconf: "false\n").run(.screenLock).status == .fail)
        #expect(fixture.probe(screenLock: "'weird'\n", dconf: "true\n").run(.screenLock).status == .unknown)
    }

    /// Issue #32, item 3: `gsettings` answers GNOME's schema default (`true`) with no desktop
    /// session and no dconf database; that is no evidence, so `unknown`, saying what is missing.
    @Test func screenLockIsUnknownFromTheSchemaDefaultAlone() throws {
        let fixture = try PostureFixture()
        let key = "org.gnome.desktop.screensaver lock-enabled"
        let alone = fixture.probe(screenLock: "true\n", dconf: "\n").run(.screenLock)
        #expect(
            alone
                == PostureResult(
                    .screenLock, .unknown,
                    "\(key) is true only by GSettings' default: no dconf database sets it and the user has no desktop session"
                ))
        // No dconf program, and a text session only (a tty is not a desktop): still no evidence.
        #expect(fixture.probe(screenLock: "true\n").run(.screenLock).status == .unknown)
        let tty = fixture.probe(screenLock: "true\n", session: ("c1", "tty")).run(.screenLock)
        #expect(tty.status == .unknown)
        // A dconf database sets it (the user's or the system's): that is the setting in effect.
        #expect(
            fixture.probe(screenLock: "false\n", dconf: "false\n").run(.screenLock)
                == PostureResult(.screenLock, .fail, "\(key): false (set in a dconf database)"))
        // A graphical session applies the default: evidence too.
        #expect(
            fixture.probe(screenLock: "true\n", dconf: "", session: ("2", "wayland")).run(.screenLock)
                == PostureResult(
                    .screenLock, .pass, "\(key): true (GSettings' default in the user's wayland session 2)"))
    }

    /// Issue #32, item 3: a layer of the root's device stack that exists but cannot be read (no
    /// permission; here a directory where a file belongs, as root reads through modes) is no
    /// evidence that the disk is not encrypted: `unknown`, naming it, not `fail`.
    @Test func anUnreadableDeviceLayerIsUnknownNotAFailure() throws {
        let fixture = try PostureFixture()
        try fixture.write("/proc/self/mountinfo", "27 1 253:1 / / rw,relatime - ext4 /dev/mapper/vg-root rw\n")
        try fixture.write("/sys/dev/block/253:1/dm/uuid", "LVM-abc\n")
        try fixture.directory("/sys/dev/block/253:1/slaves/dm-0/dm/uuid")
        #expect(
            fixture.probe().run(.diskEncryption)
                == PostureResult(
                    .diskEncryption, .unknown,
                    "/ is on /dev/mapper/vg-root (253:1), but /sys/dev/block/253:1/slaves/dm-0/dm/uuid cannot be read"))
        // The slaves directory itself unreadable (a file where the directory belongs).
        try FileManager.default.removeItem(atPath: fixture.root + "/sys/dev/block/253:1/slaves")
        try fixture.write("/sys/dev/block/253:1/slaves", "not a directory")
        #expect(fixture.probe().run(.diskEncryption).status == .unknown)
        // Every layer read and none is dm-crypt: a failure.
        try FileManager.default.removeItem(atPath: fixture.root + "/sys/dev/block/253:1/slaves")
        try fixture.directory("/sys/dev/block/253:1/slaves/sda2")
        #expect(fixture.probe().run(.diskEncryption).status == .fail)
    }

    @Test func anEmptyTreeAnswersUnknownOrNoMinimumNeverACrash() throws {
        let fixture = try PostureFixture()
        for result in fixture.probe().run() {
            #expect(result.status == .unknown, "\(result)")
        }
    }

    @Test func thisMachineAnswersEveryCheck() {
        let results = PostureProbe(command: PostureProbe.systemCommand).run()
        #expect(results.map(\.check) == PostureCheck.allCases)
        #expect(results.allSatisfy { !$0.evidence.isEmpty })
    }
}
