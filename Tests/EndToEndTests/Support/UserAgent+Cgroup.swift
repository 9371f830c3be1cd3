import Foundation

extension TestCgroupParent {
    /// Delegates the parent to the test user, as systemd delegates a user's cgroup: the user owns
    /// its directory, `cgroup.procs`, `cgroup.threads` and `cgroup.subtree_control`, so that a
    /// `cordon run` of the user's started in it (``enterAsRoot``) creates the apps' cgroups below
    /// it, and the agent of the user's freezes and kills them.
    func delegateToUser() async throws {
        let files = ["", "/cgroup.procs", "/cgroup.threads", "/cgroup.subtree_control"].map { cgroup.directory + $0 }
        try await NobodyAgent.run(["/bin/chown", "\(TestUser.uid):\(TestUser.gid)"] + files)
    }

    /// A command prefix run as root that moves itself into the parent, then execs the rest (a
    /// process of the user's may move processes only between cgroups delegated to it: it must
    /// start in one).
    var enterAsRoot: [String] {
        ["/bin/sh", "-c", #"echo $$ > "$0/cgroup.procs" && exec "$@""#, cgroup.directory]
    }
}
