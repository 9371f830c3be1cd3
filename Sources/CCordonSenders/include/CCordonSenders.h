#pragma once
#include <stdint.h>
#include <sys/types.h>

/// The largest descriptor number whose reads can be attributed (the table's size).
#define CORDON_SENDERS_MAX_DESCRIPTOR 65535

/// Starts attributing reads on the connected Unix stream socket `fd`: sets SO_PASSCRED, so the
/// kernel never returns the bytes of two writers in one read, and from now on every `read` of
/// `fd` in this process keeps the writer's process ID (SCM_CREDENTIALS) for
/// cordon_senders_last. `cookie` is the socket's SO_COOKIE: the mark belongs to this socket, not
/// to whatever later gets its number. Returns 0 or -errno (-ERANGE when `fd` is beyond the table).
int cordon_senders_attribute(int fd, uint64_t cookie);

/// Stops attributing reads on `fd`, if it is still marked for the socket `cookie` (its connection
/// is closing, perhaps after NIO closed the descriptor and the number went to another socket).
void cordon_senders_forget(int fd, uint64_t cookie);

/// The process ID of the writer of the bytes the last read of `fd` returned: > 0 as the kernel
/// reported it, 0 when the kernel attached no credentials or the writer is not visible in this
/// process's PID namespace, -1 when `fd` is not attributed for the socket `cookie` or nothing was
/// read yet.
pid_t cordon_senders_last(int fd, uint64_t cookie);
