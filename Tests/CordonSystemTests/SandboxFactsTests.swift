import CordonSystem
import Foundation
import Testing

@Suite struct SandboxFactsTests {
    @Test func flatpakInfoNamesTheAppAndItsDeployment() {
        let info = FlatpakSandbox.parse(
            """
            [Application]
            name=org.example.Notes
            runtime=runtime/org.gnome.Platform/x86_64/46

            [Instance]
            instance-id=1234
            app-path=/var/lib/flatpak/app/org.example.Notes/x86_64/stable/abc/files
            """)
        #expect(info?.name == "org.example.Notes")
        #expect(info?.appPath == "/var/lib/flatpak/app/org.example.Notes/x86_64/stable/abc/files")
        // A name outside [Application], or no app path, is no claim.
        #expect(FlatpakSandbox.parse("[Instance]\nname=x\napp-path=/a") == nil)
        #expect(FlatpakSandbox.parse("[Application]\nname=x\n") == nil)
    }

    @Test func aProcessWithoutFlatpakInfoClaimsNoSandbox() {
        #expect(FlatpakSandbox.verify(pid: getpid(), installations: [FlatpakSandbox.systemInstallation]) == nil)
    }

    @Test func executableMappingsAreReadFromMaps() {
        let maps = """
            55d0a0000000-55d0a0002000 r--p 00000000 fe:00 16418201                   /usr/bin/python3.11
            55d0a0002000-55d0a0100000 r-xp 00002000 fe:00 16418201                   /usr/bin/python3.11
            7f0000000000-7f0000100000 r-xp 00000000 fe:00 99                         /usr/lib/x86_64-linux-gnu/libc.so.6
            7f0000200000-7f0000201000 rwxp 00000000 00:00 0
            7f0000300000-7f0000301000 r-xp 00000000 00:01 5                          /memfd:jit (deleted)
            7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]
            """
        let mappings = ExecutableMappings.parse(maps)
        #expect(
            mappings.map(\.path) == [
                "/usr/bin/python3.11", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/memfd:jit (deleted)",
            ])
        #expect(mappings[0].inode == 16_418_201)
        #expect(mappings[0].device == 0xfe00)
    }

    @Test func aPathWhoseFirstNameBeginsWithACombiningMarkIsStillChecked() {
        // "/" and U+0352 form one Character, so a character-wise `hasPrefix("/")` skipped this
        // mapping: a library at such a path in a sandbox of the attacker's making went unchecked.
        let maps = """
            7f0000000000-7f0000100000 r-xp 00000000 fe:00 77                         /\u{352}x/evil.so
            7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]
            """
        let mappings = ExecutableMappings.parse(maps)
        #expect(mappings.map(\.path) == ["/\u{352}x/evil.so"])
    }

    @Test func codeFromAFileTheUserOwnsIsNotASystemFile() async throws {
        // This test process runs code only from root's files (the toolchain and the system).
        #expect(ExecutableMappings.problem(pid: getpid()) == nil)
        let directory = "/tmp/cordon-maps-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let copy = directory + "/sleep"
        try FileManager.default.copyItem(atPath: "/bin/sleep", toPath: copy)
        chown(copy, 65534, 65534)
        let process = try Process.run(URL(fileURLWithPath: copy), arguments: ["30"])
        defer { process.terminate() }
        var problem: String?
        for _ in 0..<200 {
            problem = ExecutableMappings.problem(pid: process.processIdentifier)
            if problem?.contains(copy) == true { break }
            usleep(5000)
        }
        #expect(problem == "it runs code from \(copy), which is not a root-owned system file")
    }

    @Test func aUserNamespaceIsSeenAsMadeByItsUser() async throws {
        #expect(ProcessInfoReader.inUserNamespaceMade(by: getuid(), pid: getpid()) == false)
        let process = try Process.run(URL(fileURLWithPath: "/usr/bin/unshare"), arguments: ["-Ur", "/bin/sleep", "30"])
        defer { process.terminate() }
        var made: Bool?
        for _ in 0..<200 {
            made = ProcessInfoReader.inUserNamespaceMade(by: getuid(), pid: process.processIdentifier)
            if made == true { break }
            usleep(5000)
        }
        #expect(made == true)
    }
}
