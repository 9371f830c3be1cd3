import Foundation
import Testing

/// A full disk under an app's storage (a small tmpfs, as `FullDiskTests`): the write that does not
/// fit fails with `StorageFailed` naming the full disk, and every record stored before still
/// opens. Needs root (to mount the tmpfs, then given to the user); cordond and the app run as an
/// ordinary user outside test mode (``UserAgent``).
@Suite(.enabled(if: getuid() == 0, "mounting a tmpfs needs root")) struct StorageFullDiskTests {
    /// The app: registers, hardens, stores eight records, then (after the test filled the disk,
    /// signalled by `filled` appearing) writes 32 KiB records until one fails, reads the eight
    /// back, waits for `freed`, writes once more and reads them again.
    static let app = """
        import base64, time
        s = connect(sys.argv[1])
        call(s, "io.cordon.App.Register", {"appId": "com.example.notes"})
        harden()
        marks = sys.argv[2]
        def wait_for(name):
            while not os.path.exists(os.path.join(marks, name)):
                time.sleep(0.02)
        def put(name, value):
            return call(s, "io.cordon.Storage.Put", {"name": name, "value": base64.b64encode(value).decode()})
        def get_all():
            return {n: base64.b64decode(call(s, "io.cordon.Storage.Get", {"name": n})["parameters"]["value"])
                    for n in stored}
        stored = {}
        for i in range(8):
            value = ("record %d " % i).encode() + bytes([i]) * 1000
            reply = put("kept-%d" % i, value)
            assert error(reply) is None, reply
            stored["kept-%d" % i] = value
        open(os.path.join(marks, "stored"), "w").close()
        wait_for("filled")
        failure = None
        for i in range(64):
            reply = put("new-%d" % i, b"\\xab" * 32768)
            if error(reply):
                failure = reply
                break
        intact = get_all() == stored
        open(os.path.join(marks, "failed"), "w").close()
        wait_for("freed")
        after = error(put("after", b"room again"))
        print(json.dumps({"error": failure and error(failure), "parameters": failure and failure.get("parameters"),
                          "intactWhenFull": intact, "after": after, "intactAfter": get_all() == stored}))
        """

    @Test func aWriteOnAFullDiskFailsTypedAndLosesNothing() async throws {
        let marks = try TemporaryDirectory()
        defer { marks.remove() }
        try await NobodyAgent.run(["/bin/chown", "\(TestUser.uid):\(TestUser.gid)", marks.path])
        var mounted: String?
        let agent = try await UserAgent(policy: #"{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}"#) {
            home in
            mounted = try FullDiskTests.mountSmallData(in: home)
        }
        defer {
            agent.cleanUp()
            if let mounted { _ = umount2(mounted, Int32(MNT_DETACH)) }
        }
        let data = try #require(mounted)
        async let app = agent.attack(Self.app, [marks.path])
        try await eventually("the app stored its records") {
            FileManager.default.fileExists(atPath: marks.appending("stored"))
        }
        let filled = FullDiskTests.fill(data + "/filler")
        print("storage full disk: wrote \(filled) bytes of filler on a 2 MiB tmpfs")
        _ = FileManager.default.createFile(atPath: marks.appending("filled"), contents: nil)
        try await eventually("a write failed") { FileManager.default.fileExists(atPath: marks.appending("failed")) }
        try FileManager.default.removeItem(atPath: data + "/filler")
        _ = FileManager.default.createFile(atPath: marks.appending("freed"), contents: nil)
        let answer = try await app
        #expect(answer["error"] as? String == "io.cordon.Storage.StorageFailed", "64 writes all fit: \(answer)")
        let parameters = answer["parameters"] as? [String: Any]
        #expect(parameters?["appId"] as? String == "com.example.notes", "\(answer)")
        #expect(parameters?["reason"] as? String == "the disk is full", "\(answer)")
        // Nothing stored before is lost or damaged, on the full disk and after freeing space.
        #expect(answer["intactWhenFull"] as? Bool == true)
        #expect(answer["after"] is NSNull, "\(answer)")
        #expect(answer["intactAfter"] as? Bool == true)
    }
}
