import CCordonBus
import Foundation
import Logging

/// The bus thread's state: both sd-bus connections and the sleep inhibitor. Used only on that
/// thread (sd-bus connections are not thread-safe).
final class BusRunner {
    let owner: BusLockTriggers
    let wakeFD: Int32
    var logger: Logger { owner.logger }
    var system: OpaquePointer?
    var session: OpaquePointer?
    var watchesSession = false
    var inhibitor: Int32 = -1

    init(owner: BusLockTriggers, wakeFD: Int32) {
        self.owner = owner
        self.wakeFD = wakeFD
    }

    /// Connects, then processes both buses until asked to stop.
    func run() {
        connect()
        report()
        var fds: [pollfd] = []
        while true {
            process()
            guard handleRequests() else { break }
            fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            var timeout: Int32 = -1
            for bus in [system, session].compactMap({ $0 }) {
                fds.append(
                    pollfd(
                        fd: sd_bus_get_fd(bus), events: Int16(truncatingIfNeeded: sd_bus_get_events(bus)), revents: 0))
                let ms = cordon_bus_timeout_ms(bus)
                if ms >= 0 { timeout = timeout < 0 ? ms : min(timeout, ms) }
            }
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready > 0, fds[0].revents != 0 {
                var buffer = [UInt8](repeating: 0, count: 64)
                _ = read(wakeFD, &buffer, buffer.count)
            }
        }
        releaseInhibitor()
        system = system.flatMap { sd_bus_flush_close_unref($0) }
        session = session.flatMap { sd_bus_flush_close_unref($0) }
    }

    /// The triggers in force, as `cordon status` lists them.
    var active: [String] {
        var names: [String] = []
        if system != nil {
            if watchesSession {
                names += ["logind.Session.Lock", "logind.LockedHint", "logind.IdleHint"]
            }
            names.append("logind.PrepareForSleep")
        }
        if session != nil { names += ["org.freedesktop.ScreenSaver", "org.gnome.ScreenSaver"] }
        return names
    }

    private func report() {
        let names = active
        if names.isEmpty {
            logger.warning("no D-Bus: running without lock triggers (screen lock, suspend, idle hint)")
        } else {
            logger.info("lock triggers active", metadata: ["triggers": "\(names.joined(separator: ","))"])
        }
        owner.onActive(names)
    }

    private func connect() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        system = open(owner.addresses.system, user: false)
        if let bus = system, !logindIsRoots(bus) {
            system = sd_bus_flush_close_unref(bus)
        }
        if let bus = system {
            var path = [CChar](repeating: 0, count: 512)
            let found = cordon_bus_get_session_path(bus, owner.addresses.sessionID, &path, path.count)
            let sessionPath: String? =
                found == 0
                ? String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
            if sessionPath == nil {
                logger.warning(
                    "no logind session found: only suspend is watched on the system bus", metadata: errno(found))
            }
            let watched = cordon_bus_watch_logind(bus, sessionPath, busTriggerCallback, context)
            if watched < 0 {
                logger.warning("cannot watch logind", metadata: errno(watched))
                system = sd_bus_flush_close_unref(bus)
            } else {
                watchesSession = sessionPath != nil
                takeInhibitor()
            }
        }
        session = open(owner.addresses.session, user: true)
        if let bus = session {
            let watched = cordon_bus_watch_screensaver(bus, busTriggerCallback, context)
            if watched < 0 {
                logger.warning("cannot watch the screen savers", metadata: errno(watched))
                session = sd_bus_flush_close_unref(bus)
            }
        }
    }

    /// Whether `org.freedesktop.login1` is owned by a connection of root: a logind of anyone
    /// else's making would say when to lock, and take the sleep inhibitor. Logged when not.
    private func logindIsRoots(_ bus: OpaquePointer) -> Bool {
        var unique = [CChar](repeating: 0, count: 256)
        var errorName = [CChar](repeating: 0, count: 256)
        var uid: UInt32 = 0
        let found = cordon_bus_name_owner(
            bus, "org.freedesktop.login1", &unique, unique.count, &uid, &errorName, errorName.count)
        if found >= 0, uid != 0 {
            logger.warning(
                "org.freedesktop.login1 is owned by a connection that is not root's: no lock triggers from it",
                metadata: ["uid": "\(uid)"])
            return false
        }
        // Unowned (or not asked): nothing speaks for logind now; a later owner is checked per signal.
        return true
    }

    private func open(_ address: String?, user: Bool) -> OpaquePointer? {
        var bus: OpaquePointer?
        let result = cordon_bus_open(address, user ? 1 : 0, &bus)
        guard result >= 0 else {
            logger.warning(
                "cannot connect to the \(user ? "session" : "system") bus",
                metadata: errno(result).merging(["address": "\(address ?? "default")"]) { $1 })
            return nil
        }
        return bus
    }

    private func errno(_ result: Int32) -> Logger.Metadata {
        ["error": "\(String(cString: strerror(-result)))"]
    }

    /// Runs every pending sd-bus step; a connection that broke is dropped.
    private func process() {
        for user in [false, true] {
            guard let bus = user ? session : system else { continue }
            var result: Int32 = 1
            while result > 0 { result = sd_bus_process(bus, nil) }
            guard result < 0 else { continue }
            logger.warning("lost the \(user ? "session" : "system") bus", metadata: errno(result))
            if user { session = sd_bus_flush_close_unref(bus) } else { system = sd_bus_flush_close_unref(bus) }
            report()
        }
    }

    /// Handles requests from other threads; false once asked to stop.
    private func handleRequests() -> Bool {
        let (stopping, release) = owner.shared.withLock { state -> (Bool, Bool) in
            defer { state.releaseRequested = false }
            return (state.stopping, state.releaseRequested)
        }
        if release { releaseInhibitor() }
        return !stopping
    }

    private func takeInhibitor() {
        guard let bus = system, inhibitor < 0 else { return }
        let fd = cordon_bus_inhibit(bus, "sleep", "cordond", "lock the container before sleep", "delay")
        guard fd >= 0 else {
            logger.warning("cannot take a sleep inhibitor: suspend may not wait for the lock", metadata: errno(fd))
            return
        }
        inhibitor = fd
        logger.debug("sleep inhibitor taken", metadata: ["fd": "\(fd)"])
    }

    private func releaseInhibitor() {
        guard inhibitor >= 0 else { return }
        close(inhibitor)
        inhibitor = -1
        logger.debug("sleep inhibitor released")
    }

    /// A watched signal arrived (on this thread, from `sd_bus_process`).
    func triggered(kind: Int32, value: Bool) {
        switch kind {
        case Int32(CORDON_BUS_SESSION_LOCK.rawValue):
            owner.onTrigger(.screenLock(source: "logind.Session.Lock"))
        case Int32(CORDON_BUS_LOCKED_HINT.rawValue):
            if value { owner.onTrigger(.screenLock(source: "logind.LockedHint")) }
        case Int32(CORDON_BUS_IDLE_HINT.rawValue):
            if value { owner.onTrigger(.idle) }
        case Int32(CORDON_BUS_PREPARE_FOR_SLEEP.rawValue):
            if value {
                owner.onTrigger(.suspend)
            } else {
                takeInhibitor()
                owner.onTrigger(.resume)
            }
        case Int32(CORDON_BUS_SCREENSAVER_ACTIVE.rawValue):
            if value { owner.onTrigger(.screenLock(source: "org.freedesktop.ScreenSaver")) }
        case Int32(CORDON_BUS_GNOME_SCREENSAVER_ACTIVE.rawValue):
            if value { owner.onTrigger(.screenLock(source: "org.gnome.ScreenSaver")) }
        default:
            break
        }
    }

    /// A logind signal was dropped: its sender is not a connection of root.
    func untrusted(uid: Int32) {
        logger.warning(
            "ignored a logind signal from a connection that is not root's",
            metadata: ["uid": "\(uid < 0 ? "unknown" : "\(uid)")"])
    }
}

/// The C callback for every watch: `userdata` is the thread's `BusRunner`.
private let busTriggerCallback: cordon_bus_trigger_fn = { kind, value, userdata in
    guard let userdata else { return }
    let runner = Unmanaged<BusRunner>.fromOpaque(userdata).takeUnretainedValue()
    if kind == Int32(CORDON_BUS_UNTRUSTED_SENDER.rawValue) {
        runner.untrusted(uid: value)
    } else {
        runner.triggered(kind: kind, value: value != 0)
    }
}
