import CCordonBench
import Foundation

/// A real Secret Service (org.freedesktop.secrets) on a private dbus-daemon session bus in a
/// temporary directory, never the user's (`PrivateSessionBus`), holding one item of the
/// Storage.Get record's bytes. A C client on sd-bus (`ccb_secret_*`,
/// Sources/CCordonBench/secret_service.c) makes the measured calls on one long-lived connection
/// (docs/PERFORMANCE.md, "Secret Service peers"):
///
/// - gnome-keyring-daemon (`--components=secrets`): its login keyring created and unlocked with a
///   known password read on standard input (`--unlock`), the item stored through the API
///   (`Collection.CreateItem`);
/// - KeePassXC, headless (`QT_QPA_PLATFORM=offscreen`): a database made by `keepassxc-cli import`
///   from a KeePass XML file whose root group is exposed to the Secret Service and holds the item,
///   opened with its password on standard input (`--pw-stdin`), the integration enabled in its
///   ini file.
final class SecretServicePeer {
    static let password = "cordon-bench-password"

    let name: String
    let bus: PrivateSessionBus
    let daemon: SpawnedProcess
    let itemPath: String
    let value: [UInt8]
    /// The attribute the item is looked up with.
    let attribute: (key: String, value: String)
    private let client: OpaquePointer

    /// Connects to the service once `daemon` owns its name on `bus`, and finds the item: stored
    /// by `store` when given, else searched by `attribute`. Stops both processes on failure.
    private init(
        name: String, bus: PrivateSessionBus, daemon: SpawnedProcess, log: String, value: [UInt8],
        attribute: (key: String, value: String), store: Bool
    ) throws {
        var opened: OpaquePointer?
        var path = ""
        let client: OpaquePointer
        do {
            var error = [CChar](repeating: 0, count: 512)
            var item = [CChar](repeating: 0, count: 512)
            // Not too often: KeePassXC has been seen to crash (SIGSEGV) when polled every 10 ms
            // while it opens its database.
            try daemon.wait(upTo: 30, what: "serving org.freedesktop.secrets on its bus", every: store ? 0.01 : 0.5) {
                if opened == nil, ccb_secret_open(bus.address, "org.freedesktop.secrets", &opened, &error, 512) != 0 {
                    return false
                }
                // KeePassXC shows its collection once the database is open.
                return store || ccb_secret_search(opened, attribute.key, attribute.value, &item, 512) == 0
            }
            guard let connected = opened else { throw PeerError("no Secret Service client") }
            client = connected
            if store {
                let rc = value.withUnsafeBufferPointer {
                    ccb_secret_store(
                        client, nil, "cordon-bench rtt record", attribute.key, attribute.value, $0.baseAddress,
                        $0.count, &item, 512, &error, 512)
                }
                guard rc == 0 else { throw PeerError("storing the item: \(Self.text(error))") }
            }
            path = Self.text(item)
        } catch {
            if let opened { ccb_secret_close(opened) }
            daemon.stop()
            bus.stop()
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw PeerError("\(name): \(error)\(output.isEmpty ? "" : " (its output: \(output))")")
        }
        self.name = name
        self.bus = bus
        self.daemon = daemon
        self.value = value
        self.attribute = attribute
        self.client = client
        itemPath = path
        // Both calls once, so a set-up that answers wrongly fails here rather than mid-run.
        do {
            try getByPath()
            try lookup()
        } catch {
            stop()
            throw error
        }
    }

    /// gnome-keyring-daemon on its own bus in `directory`, `value` stored in its login keyring.
    static func gnomeKeyring(directory: String, value: [UInt8], busExecutable: String, executable: String) throws
        -> SecretServicePeer
    {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw PeerError("\(executable) not installed (apt-get install gnome-keyring)")
        }
        let bus = try PrivateSessionBus(directory: directory, executable: busExecutable)
        let log = directory + "/keyring.log"
        let daemon: SpawnedProcess
        do {
            daemon = try SpawnedProcess(
                executable: executable, arguments: ["--foreground", "--unlock", "--components=secrets"],
                environment: bus.environment(), input: Array(password.utf8), output: log)
        } catch {
            bus.stop()
            throw error
        }
        return try SecretServicePeer(
            name: "gnome-keyring", bus: bus, daemon: daemon, log: log, value: value,
            attribute: ("cordon-bench", "rtt-record"), store: true)
    }

    /// KeePassXC on its own bus in `directory`, `value` (text: it is an entry's password) in an
    /// exposed group of a new database.
    static func keepassXC(directory: String, value: [UInt8], busExecutable: String, executable: String, cli: String)
        throws -> SecretServicePeer
    {
        for program in [executable, cli] where !FileManager.default.isExecutableFile(atPath: program) {
            throw PeerError("\(program) not installed (apt-get install keepassxc)")
        }
        guard let text = String(validating: value, as: UTF8.self), !text.contains(where: \.isNewline) else {
            throw PeerError("KeePassXC stores text: the record is not one line of UTF-8")
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let xml = directory + "/bench.xml"
        let database = directory + "/bench.kdbx"
        try Self.keepassXML(password: text).write(toFile: xml, atomically: true, encoding: .utf8)
        let importer = try SpawnedProcess(
            executable: cli, arguments: ["import", "-q", "-p", "-t", "100", xml, database],
            environment: ["PATH": "/usr/bin:/bin"],
            input: Array("\(password)\n\(password)\n".utf8), output: directory + "/import.log")
        let status = importer.waitForExit()
        guard status == 0, FileManager.default.fileExists(atPath: database) else {
            let output = (try? String(contentsOfFile: directory + "/import.log", encoding: .utf8)) ?? ""
            throw PeerError("keepassxc-cli import failed (\(status)): \(output)")
        }
        let bus = try PrivateSessionBus(directory: directory, executable: busExecutable)
        let log = directory + "/keepassxc.log"
        let daemon: SpawnedProcess
        do {
            let configuration = bus.home + "/config/keepassxc"
            try FileManager.default.createDirectory(atPath: configuration, withIntermediateDirectories: true)
            try Self.keepassINI.write(toFile: configuration + "/keepassxc.ini", atomically: true, encoding: .utf8)
            daemon = try SpawnedProcess(
                executable: executable, arguments: ["--pw-stdin", database],
                environment: bus.environment(["QT_QPA_PLATFORM": "offscreen"]), input: Array("\(password)\n".utf8),
                output: log)
        } catch {
            bus.stop()
            throw error
        }
        return try SecretServicePeer(
            name: "KeePassXC", bus: bus, daemon: daemon, log: log, value: value, attribute: ("Title", "cordon-bench"),
            store: false)
    }

    /// KeePassXC's settings: the Secret Service on, no notification, confirmation or unlock
    /// dialog (no one is there to answer: a search before the database is open would otherwise
    /// wait on a dialog), no tray, no update check.
    static let keepassINI = """
        [General]
        ConfigVersion=2
        SingleInstance=false
        RememberLastDatabases=false
        RememberLastKeyFiles=false

        [GUI]
        ShowTrayIcon=false
        CheckForUpdates=false

        [FdoSecrets]
        Enabled=true
        ShowNotification=false
        ConfirmAccessItem=false
        ConfirmDeleteItem=false
        UnlockBeforeSearch=false

        """

    /// A KeePass XML database: one root group, exposed to the Secret Service
    /// (`FDO_SECRETS_EXPOSED_GROUP`), with one entry titled `cordon-bench` whose password is
    /// `password`.
    static func keepassXML(password: String) -> String {
        let group = UUID()
        let entry = UUID()
        func base64(_ uuid: UUID) -> String { withUnsafeBytes(of: uuid.uuid) { Data($0).base64EncodedString() } }
        let escaped = password.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
        return """
            <?xml version="1.0" encoding="utf-8" standalone="yes"?>
            <KeePassFile><Meta><Generator>cordon-bench</Generator><DatabaseName>cordon-bench</DatabaseName>
            <CustomData><Item><Key>FDO_SECRETS_EXPOSED_GROUP</Key><Value>{\(group.uuidString.lowercased())}</Value></Item></CustomData>
            </Meta><Root><Group><UUID>\(base64(group))</UUID><Name>Root</Name>
            <Entry><UUID>\(base64(entry))</UUID><String><Key>Title</Key><Value>cordon-bench</Value></String>
            <String><Key>Password</Key><Value>\(escaped)</Value></String></Entry>
            </Group></Root></KeePassFile>

            """
    }

    /// The processes whose placement the benchmark sets: the bus and the daemon.
    var pids: [Int32] { [bus.process.pid, daemon.pid] }

    /// `Item.GetSecret` by the item's path (plain session); throws unless the secret is the value.
    func getByPath() throws {
        let rc = value.withUnsafeBufferPointer { ccb_secret_get_by_path(client, itemPath, $0.baseAddress, $0.count) }
        if rc != 0 { throw PeerError("\(name): \(String(cString: ccb_secret_last_error(client)))") }
    }

    /// SearchItems, then GetSecrets over the encrypted session (what libsecret's
    /// secret_password_lookup_sync sends); throws unless the decrypted secret is the value.
    func lookup() throws {
        let rc = value.withUnsafeBufferPointer {
            ccb_secret_lookup(client, attribute.key, attribute.value, $0.baseAddress, $0.count)
        }
        if rc != 0 { throw PeerError("\(name): \(String(cString: ccb_secret_last_error(client)))") }
    }

    /// A NUL-terminated C buffer as text.
    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func stop() {
        ccb_secret_close(client)
        daemon.stop()
        bus.stop()
    }
}

/// Why a Secret Service peer could not be set up or answered wrongly.
struct PeerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
