/// The systemd user units for cordond, generated for an installed binary. The files in the
/// repository's `systemd/` directory are these units for the default path (`%h/.local/bin`).
public enum SystemdUnits {
    /// The `ExecStart` binary of the shipped units: `make install`'s default location.
    public static let defaultCordondPath = "%h/.local/bin/cordond"

    /// `cordond.socket`: the agent's socket in `$XDG_RUNTIME_DIR/cordon`, 0600 in a 0700 directory.
    public static let socket = """
        [Unit]
        Description=Cordon agent socket

        [Socket]
        ListenStream=%t/cordon/agent.sock
        SocketMode=0600
        DirectoryMode=0700
        RemoveOnStop=yes

        [Install]
        WantedBy=sockets.target

        """

    /// `cordond.service` running `cordondPath` (Type=notify, watchdog, sandboxed).
    public static func service(cordondPath: String = defaultCordondPath) -> String {
        """
        [Unit]
        Description=Cordon agent: the container's key behind a passcode and a lock
        Requires=cordond.socket
        After=cordond.socket

        [Service]
        Type=notify
        NotifyAccess=main
        ExecStart=\(cordondPath)
        WatchdogSec=30s
        TimeoutStopSec=15s
        Restart=on-failure
        # The master key and derived keys live in mlock'ed pages.
        LimitMEMLOCK=64M
        LimitCORE=0
        UMask=0077
        NoNewPrivileges=yes
        # Path sockets only (agent, journal, system and session buses); no network.
        RestrictAddressFamilies=AF_UNIX
        ProtectSystem=strict
        ReadWritePaths=-%h/.local/share/cordon -%h/.config/cordon -%t/cordon -/var/lib/cordon/metrics/%u
        PrivateTmp=yes
        PrivateDevices=yes
        ProtectKernelTunables=yes
        ProtectKernelModules=yes
        ProtectKernelLogs=yes
        ProtectControlGroups=yes
        ProtectClock=yes
        ProtectHostname=yes
        LockPersonality=yes
        MemoryDenyWriteExecute=yes
        RestrictRealtime=yes
        RestrictSUIDSGID=yes
        RestrictNamespaces=yes
        SystemCallArchitectures=native
        SystemCallFilter=@system-service
        SystemCallFilter=~@privileged

        [Install]
        WantedBy=default.target

        """
    }

    /// The directories the service's `ReadWritePaths` names under the home directory; they must
    /// exist before the service starts (its sandbox cannot create them).
    public static func writableDirectories(home: String) -> [String] {
        [home + "/.local/share/cordon", home + "/.config/cordon"]
    }

    /// What to run once the units are installed.
    public static func enableInstructions(unitDirectory: String) -> String {
        """
        Installed cordond.socket and cordond.service in \(unitDirectory).
        Enable the agent (started on the first connection to its socket):
            systemctl --user daemon-reload
            systemctl --user enable --now cordond.socket
        Check it:  systemctl --user status cordond.socket cordond.service
        Its log:   journalctl --user -u cordond.service
        """
    }
}
