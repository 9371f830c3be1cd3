import CCordonLinux
import Foundation

/// Which descriptors a spawned child gets: only the ones meant for it.
///
/// SwiftNIO opens its sockets without close-on-exec, so a child spawned plainly would inherit
/// the connection to cordond (and in the agent, every client's socket). Children are spawned
/// with file actions that first place their intended descriptors at 0, 1 and 2 (`dup2`,
/// `open`) and then close everything from 3 up.
public enum SpawnDescriptors {
    /// Adds to `actions` the closing of every descriptor from 3 up in the child. Add it after
    /// the actions that set up 0, 1 and 2 (they may read descriptors it closes).
    public static func closeAllButStandard(_ actions: inout posix_spawn_file_actions_t) throws {
        try closeAll(from: 3, &actions)
    }

    /// Adds to `actions` the closing of every descriptor from `lowest` up in the child (after the
    /// actions that place the child's descriptors below it).
    public static func closeAll(from lowest: Int32, _ actions: inout posix_spawn_file_actions_t) throws {
        let rc = cordon_spawn_close_from(&actions, lowest)
        if rc == 0 { return }
        guard rc == -ENOSYS else {
            throw SystemError(operation: "posix_spawn_file_actions_addclosefrom_np", errno: -rc)
        }
        // An older C library: close what is open now, one by one.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in names.compactMap({ Int32($0) }) where descriptor >= lowest && fcntl(descriptor, F_GETFD) >= 0
        {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
    }
}
