import CCordonLinux
import Glibc

extension ProcessInfoReader {
    /// Whether `pid` runs in a user namespace that the user `uid` made (`unshare -U`, bubblewrap,
    /// a Flatpak sandbox), or nil when that cannot be read.
    ///
    /// In such a namespace the user may mount anything over anything, so the files the process
    /// sees (its libraries, `/etc/ld.so.preload`, its root) are whatever the user arranged: a
    /// binding by executable path cannot vouch for it (docs/THREAT-MODEL.md, "App identity"). The
    /// owner is the uid that created the namespace (`NS_GET_OWNER_UID`); for root, whose owner
    /// uid is also the initial namespace's, a namespace other than pid 1's (or, where that is out
    /// of reach, the agent's own) counts as made.
    public static func inUserNamespaceMade(by uid: UInt32, pid: Int32) -> Bool? {
        var owner: uid_t = 0
        var inode: UInt64 = 0
        guard cordon_user_namespace_owner(pid, &owner, &inode) == 0 else { return nil }
        guard uid == 0 else { return owner == uid }
        // Pid 1's namespace is the initial one; where pid 1 is out of reach, the agent's own.
        var initialOwner: uid_t = 0
        var initial: UInt64 = 0
        guard
            cordon_user_namespace_owner(1, &initialOwner, &initial) == 0
                || cordon_user_namespace_owner(getpid(), &initialOwner, &initial) == 0
        else { return nil }
        return inode != initial
    }
}
