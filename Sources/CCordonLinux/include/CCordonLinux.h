#pragma once
#include <sys/types.h>
#include <spawn.h>
#include <stdint.h>

/// Marks the process non-dumpable (no core dumps, no ptrace by same-uid peers). Returns 0 or -errno.
int cordon_set_nondumpable(void);
/// Makes the calling process dumpable again (PR_SET_DUMPABLE 1); 0 or -errno.
int cordon_set_dumpable(void);
/// Returns 1 when the process is dumpable, 0 when not, -errno on error.
int cordon_get_dumpable(void);
/// Opens a pidfd for `pid` (pidfd_open). Returns the fd or -errno.
int cordon_pidfd_open(pid_t pid);
/// Sends `sig` through a pidfd (pidfd_send_signal). Returns 0 or -errno.
int cordon_pidfd_send_signal(int pidfd, int sig);
/// Sends `sig` to the process group of the process behind `pidfd` (PIDFD_SIGNAL_PROCESS_GROUP,
/// Linux 6.9+). Returns 0 or -errno (-EINVAL on kernels without the flag).
int cordon_pidfd_signal_group(int pidfd, int sig);
/// Reads the peer's credentials of a connected Unix socket. Returns 0 or -errno.
int cordon_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);
/// Returns a pidfd for the peer of a connected Unix socket (SO_PEERPIDFD), or -errno.
int cordon_peer_pidfd(int fd);
/// Locks `len` bytes at `addr` in memory and excludes them from core dumps. Returns 0 or -errno.
int cordon_protect_memory(void *addr, size_t len);
/// Unlocks memory locked by cordon_protect_memory.
void cordon_unprotect_memory(void *addr, size_t len);
/// Zeroes `len` bytes in a way the compiler cannot elide.
void cordon_secure_zero(void *addr, size_t len);
/// Probes a Unix socket path: 1 if a listener answers, 0 if nothing listens (stale), -errno otherwise.
int cordon_probe_unix_socket(const char *path);
/// Creates a close-on-exec pipe. Returns 0 or -errno.
int cordon_pipe_cloexec(int fds[2]);
/// Adds to `actions` the closing of every descriptor from `lowest` up, in the child, after the
/// actions before it (posix_spawn_file_actions_addclosefrom_np, glibc 2.34+). Returns 0 or
/// -errno (-ENOSYS where the C library lacks it).
int cordon_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);
/// Finds this process's socket descriptor whose SO_COOKIE is `cookie` (scanning /proc/self/fd).
/// Returns the descriptor (not a new one: do not close it) or -errno (-ENOENT when none).
int cordon_socket_with_cookie(uint64_t cookie);
/// Sends `len` bytes of `buf` on the stream socket `sock` with the descriptor `fd` attached
/// (SCM_RIGHTS), without blocking or SIGPIPE. Returns the bytes sent or -errno.
long cordon_send_with_descriptor(int sock, const void *buf, size_t len, int fd);
/// The uid (in the caller's user namespace) of whoever created the user namespace of the process
/// `pid` (NS_GET_OWNER_UID on /proc/PID/ns/user), and that namespace's inode in `*inode`.
/// Returns 0 or -errno.
int cordon_user_namespace_owner(pid_t pid, uid_t *owner, unsigned long long *inode);
/// Reads the kernel's cookie of the socket `fd` (SO_COOKIE). Returns 0 or -errno.
int cordon_socket_cookie(int fd, uint64_t *cookie);
/// Writes up to `len` bytes of `buf` to the stream socket `sock` without blocking and without
/// SIGPIPE (send with MSG_DONTWAIT | MSG_NOSIGNAL), retrying on EINTR. Returns the bytes written
/// (possibly fewer than `len`) or -errno (-EAGAIN when the socket has no room).
long cordon_send_nonblocking(int sock, const void *buf, size_t len);
/// The uid owning the TCP socket whose own address is `local` and whose peer is `remote`
/// (`family` AF_INET or AF_INET6; addresses in network byte order, 4 or 16 bytes; ports in host
/// order), as the kernel's socket diagnostics report it (NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY
/// for that exact 4-tuple, `idiag_uid`). For the connecting end of a connection accepted on this
/// side, pass the accepted socket's peer as `local` and its own address as `remote`. Returns 0, or
/// -ENOENT when no process holds such a socket (closed meanwhile), or -errno.
int cordon_tcp_socket_owner(int family, const uint8_t *local, uint16_t local_port, const uint8_t *remote,
                            uint16_t remote_port, uid_t *uid);

/// Lowers the calling thread's scheduling priority by `increment` nice steps (Linux keeps a nice
/// value per thread; lowering it needs no privilege) and stores its nice value after in `after`.
/// Returns 0, or -errno (nothing is stored then).
int cordon_lower_thread_priority(int increment, int *after);

/// The calling thread's id (`gettid`, which Swift's Glibc module does not export).
pid_t cordon_gettid(void);

#include "CCordonDocuments.h"
