// Who wrote each read of an app's connection (docs/ARCHITECTURE.md, "Who wrote a message").
//
// SwiftNIO reads stream sockets with read(2), which drops the ancillary data the kernel attaches
// to every write on a Unix socket: the writer's process ID, user and group (SCM_CREDENTIALS).
// This file defines `read` for the executable it is linked into. For a descriptor marked with
// cordon_senders_attribute it is a recvmsg(2) that keeps the writer's process ID; for every
// other descriptor it is the read system call, unchanged. The static linker binds NIO's calls
// (and every other `read` in the executable) to this definition; shared libraries keep the C
// library's. So a message is attributed on the event loop that reads it, with no second system
// call and no thread of its own.
//
// With SO_PASSCRED set on the receiving socket the kernel never glues the bytes of two writers
// into one read (unix_stream_read_generic: "Never glue messages from different writers"), so one
// read has one writer.
#undef _FORTIFY_SOURCE  // its inline `read` wrapper would clash with the definition below
#define _GNU_SOURCE
#include "CCordonSenders.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

// Per descriptor: the SO_COOKIE of the socket marked under that number (0: none), and the
// writer of its last read: -1 = nothing read yet; otherwise 1 + the writer's process ID (so a
// writer the kernel reports as 0 is stored as 1). The agent serves its connections on one event
// loop; the atomics keep a read on another thread (a reused number) well defined.
static _Atomic uint64_t cordon_sender_sockets[CORDON_SENDERS_MAX_DESCRIPTOR + 1];
static _Atomic int cordon_senders[CORDON_SENDERS_MAX_DESCRIPTOR + 1];

int cordon_senders_attribute(int fd, uint64_t cookie) {
    if (fd < 0 || fd > CORDON_SENDERS_MAX_DESCRIPTOR) return -ERANGE;
    if (cookie == 0) return -EINVAL;
    int on = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0) return -errno;
    atomic_store_explicit(&cordon_senders[fd], -1, memory_order_relaxed);
    atomic_store_explicit(&cordon_sender_sockets[fd], cookie, memory_order_release);
    return 0;
}

void cordon_senders_forget(int fd, uint64_t cookie) {
    if (fd < 0 || fd > CORDON_SENDERS_MAX_DESCRIPTOR) return;
    uint64_t expected = cookie;
    atomic_compare_exchange_strong_explicit(
        &cordon_sender_sockets[fd], &expected, 0, memory_order_acq_rel, memory_order_relaxed);
}

pid_t cordon_senders_last(int fd, uint64_t cookie) {
    if (fd < 0 || fd > CORDON_SENDERS_MAX_DESCRIPTOR) return -1;
    if (atomic_load_explicit(&cordon_sender_sockets[fd], memory_order_acquire) != cookie) return -1;
    int stored = atomic_load_explicit(&cordon_senders[fd], memory_order_relaxed);
    return stored <= 0 ? -1 : stored - 1;
}

// Closes any descriptors a writer attached (SCM_RIGHTS): the agent never takes descriptors on an
// app's connection, and read(2) would have discarded them too.
static void close_passed_descriptors(struct msghdr *message) {
    for (struct cmsghdr *c = CMSG_FIRSTHDR(message); c != NULL; c = CMSG_NXTHDR(message, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        int descriptors[count > 0 ? count : 1];
        memcpy(descriptors, CMSG_DATA(c), count * sizeof(int));
        for (size_t i = 0; i < count; i++) close(descriptors[i]);
    }
}

__attribute__((visibility("default"))) ssize_t read(int fd, void *buffer, size_t count) {
    if (fd < 0 || fd > CORDON_SENDERS_MAX_DESCRIPTOR) return syscall(SYS_read, fd, buffer, count);
    uint64_t socket = atomic_load_explicit(&cordon_sender_sockets[fd], memory_order_acquire);
    if (socket == 0) return syscall(SYS_read, fd, buffer, count);
    struct iovec vector = {.iov_base = buffer, .iov_len = count};
    union {
        char bytes[CMSG_SPACE(sizeof(struct ucred))];
        struct cmsghdr align;
    } control;
    struct msghdr message = {
        .msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.bytes, .msg_controllen = sizeof control.bytes};
    ssize_t received = recvmsg(fd, &message, MSG_CMSG_CLOEXEC);
    if (received < 0) {
        // A number reused for something that is not a socket before the mark was cleared.
        if (errno == ENOTSOCK) return syscall(SYS_read, fd, buffer, count);
        return received;
    }
    close_passed_descriptors(&message);
    pid_t writer = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&message); c != NULL; c = CMSG_NXTHDR(&message, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
            c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
            struct ucred credentials;
            memcpy(&credentials, CMSG_DATA(c), sizeof credentials);
            writer = credentials.pid;
        }
    }
    // Kept only while the number is still marked for the same socket.
    if (atomic_load_explicit(&cordon_sender_sockets[fd], memory_order_acquire) == socket)
        atomic_store_explicit(&cordon_senders[fd], writer + 1, memory_order_relaxed);
    return received;
}
