#pragma once
#include <stdint.h>
#include <systemd/sd-bus.h>
#include "secret_service.h"

// The fan-out benchmark's receivers, both with the same design: ONE thread, ONE epoll
// instance over every connection, level-triggered, 256 events per epoll_wait. A round starts
// when the caller asks to wait and ends when every connection has delivered one matching
// message; the result is the CLOCK_MONOTONIC time of that last delivery.

/// CLOCK_MONOTONIC in nanoseconds (the clock every result below is on).
int64_t ccb_now_ns(void);
/// CPU time of the calling thread in nanoseconds (CLOCK_THREAD_CPUTIME_ID).
int64_t ccb_thread_cpu_ns(void);
/// CPU time of process `pid` (all its threads, the ended ones included), or a negative value.
int64_t ccb_process_cpu_ns(int32_t pid);
/// Raises RLIMIT_NOFILE's soft limit to `wanted` (capped at the hard limit, raised too when
/// privileged). Returns the soft limit now in force, or -errno.
int64_t ccb_raise_nofile(uint64_t wanted);
/// Connects a blocking Unix stream socket to `path`. Returns the fd or -errno.
int ccb_unix_connect(const char *path);
/// Writes all `length` bytes. Returns 0 or -errno.
int ccb_write_all(int fd, const void *bytes, size_t length);
/// Reads one NUL-terminated message (the socket must carry nothing after it yet) into `buffer`
/// (NUL-terminated, truncated to `capacity`). Returns its length or -errno (-EPIPE on close).
int64_t ccb_read_message(int fd, char *buffer, size_t capacity);

/// Varlink side: NUL-framed messages on plain stream sockets.
typedef struct ccb_stream_fanout ccb_stream_fanout;
/// Watches `count` connected sockets (not owned; stay blocking) with one epoll instance.
/// Returns 0 or -errno.
int ccb_stream_fanout_new(const int *fds, int count, ccb_stream_fanout **out);
/// Waits until every socket has received a complete frame containing `needle`; other frames are
/// skipped. Returns the time of the last such frame, or -errno (-ETIMEDOUT after
/// `timeout_ms`, -EPIPE when a socket closed).
int64_t ccb_stream_fanout_wait(ccb_stream_fanout *fanout, const char *needle, int timeout_ms);
void ccb_stream_fanout_free(ccb_stream_fanout *fanout);

/// D-Bus side: sd-bus connections, each with one match, processed with sd_bus_process.
typedef struct ccb_bus_fanout ccb_bus_fanout;
/// Opens `count` connections to `address` (sd_bus_new, sd_bus_set_address, sd_bus_start), adds
/// `match` on each and drains what the bus sent them. Returns 0 or -errno.
int ccb_bus_fanout_open(const char *address, int count, const char *match, ccb_bus_fanout **out);
/// Waits until the match has fired on every connection. Returns the time of the last, or -errno.
int64_t ccb_bus_fanout_wait(ccb_bus_fanout *fanout, int timeout_ms);
void ccb_bus_fanout_free(ccb_bus_fanout *fanout);

/// One sender connection. Returns 0 or -errno.
int ccb_bus_sender_open(const char *address, sd_bus **out);
/// Emits the benchmark's signal `io.cordon.Bench.DidLock` on /io/cordon/Bench (arguments shaped
/// like a Cordon event: seq, kind, reason, state, time) and flushes it. Returns 0 or -errno.
int ccb_bus_emit(sd_bus *bus, uint64_t seq, double time);
void ccb_bus_close(sd_bus *bus);

/// The round-trip baseline: forks a separate process (plain C, system calls only) that accepts
/// one connection on `path` and answers every NUL-terminated message with `reply_length` spaces
/// and a NUL, until the peer closes. The socket listens before this returns; the child is pinned
/// to `cpu` when `cpu >= 0`. Returns the child's pid, or -errno.
int32_t ccb_echo_spawn(const char *path, size_t reply_length, int cpu);
/// The round-trip floor: like `ccb_echo_spawn`, but its process answers as the agent's loop must
/// at the least, in system calls: epoll_wait, recvmsg with SO_PASSCRED (the writer of each
/// message), with `checks` (a data call of a registered app) fstatat of the client's
/// /proc/PID/stat and poll of its pidfd (still that process, still non-dumpable), send. A message
/// from another writer, or (with `checks`) a client that became dumpable or exited, closes the
/// connection. Returns the child's pid, or -errno.
int32_t ccb_floor_spawn(const char *path, size_t reply_length, int cpu, int checks);
/// Kills and reaps the echo (or floor) process.
void ccb_echo_stop(int32_t pid);
/// Pins the calling thread to `cpu`; `-1` allows every online CPU. Returns 0 or -errno.
int ccb_pin_thread(int cpu);
/// Pins every thread of process `pid` (as listed in /proc/PID/task) to `cpu`; `-1` allows every
/// online CPU. Returns 0 or -errno.
int ccb_pin_process(int32_t pid, int cpu);
/// The number of online CPUs.
int ccb_cpu_count(void);
/// The pid of the process at the other end of Unix socket `fd` (`SO_PEERCRED`), or -errno.
int32_t ccb_peer_pid(int fd);
