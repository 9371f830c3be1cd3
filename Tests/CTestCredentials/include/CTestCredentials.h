#pragma once
#include <sys/types.h>

/// Connects a Unix stream socket to `path` with the calling thread's effective uid and gid switched
/// to `uid`/`gid` for the `connect` (raw setresuid/setresgid: this thread only), so the peer's
/// SO_PEERCRED names that user; switches back to root before returning. For test clients of an
/// agent run as an ordinary user from a root test process. Returns the descriptor (close-on-exec)
/// or -errno.
int cordon_test_connect_as(const char *path, uid_t uid, gid_t gid);
