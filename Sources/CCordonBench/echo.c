#define _GNU_SOURCE
#include "CCordonBench.h"
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/un.h>
#include <unistd.h>

// The round-trip baseline (docs/PERFORMANCE.md, "Round trip"): a separate process in plain C,
// so it costs what a socket peer costs and nothing more. The child only makes system calls
// (no allocation, no locks) because it is forked from a multi-threaded process.

static int set_affinity(pid_t tid, int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (cpu < 0) {
        long count = sysconf(_SC_NPROCESSORS_ONLN);
        for (long i = 0; i < count && i < CPU_SETSIZE; i++) CPU_SET((int)i, &set);
    } else {
        CPU_SET(cpu, &set);
    }
    return sched_setaffinity(tid, sizeof(set), &set) == 0 ? 0 : -errno;
}

int ccb_pin_thread(int cpu) { return set_affinity(0, cpu); }

int ccb_pin_process(int32_t pid, int cpu) {
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", pid);
    DIR *tasks = opendir(path);
    if (tasks == NULL) return -errno;
    int result = 0;
    struct dirent *entry;
    while ((entry = readdir(tasks)) != NULL) {
        if (entry->d_name[0] == '.') continue;
        int rc = set_affinity((pid_t)atoi(entry->d_name), cpu);
        if (rc != 0 && rc != -ESRCH) result = rc;  // A thread that ended meanwhile is fine.
    }
    closedir(tasks);
    return result;
}

int ccb_cpu_count(void) { return (int)sysconf(_SC_NPROCESSORS_ONLN); }

static void serve_echo(int listener, const char *reply, size_t length) {
    int connection = accept(listener, NULL, NULL);
    if (connection < 0) _exit(1);
    char chunk[65536];
    for (;;) {
        ssize_t count = read(connection, chunk, sizeof(chunk));
        if (count < 0 && errno == EINTR) continue;
        if (count <= 0) _exit(0);
        if (chunk[count - 1] != '\0') continue;  // Until the message's NUL (the client sends one at a time).
        if (ccb_write_all(connection, reply, length) != 0) _exit(0);
    }
}

// The floor (docs/PERFORMANCE.md, "The floor and how the client waits"): what the
// agent's loop must do for every call, and nothing else. It waits in epoll_wait as the agent's
// event loop does, reads with SO_PASSCRED set and takes the writer's credentials from the message
// (the agent's per-message writer attribution), refuses a writer other than the process that
// connected, and sends the reply. For a data call of a registered app (`identity_checks`) it also
// checks that the process is still non-dumpable and alive (fstatat of /proc/PID/stat under the
// directory opened at accept, then poll of its pidfd, as ProcessDirectory and Pidfd do). A failed
// check closes the connection, as the agent refuses the call.
static void serve_floor(int listener, const char *reply, size_t length, int identity_checks) {
    int connection = accept(listener, NULL, NULL);
    if (connection < 0) _exit(1);
    int on = 1;
    struct ucred peer;
    socklen_t peer_length = sizeof(peer);
    if (setsockopt(connection, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) != 0 ||
        getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &peer, &peer_length) != 0 ||
        fcntl(connection, F_SETFL, O_NONBLOCK) != 0)
        _exit(1);
    // "/proc/PID", written by hand: the child of a multi-threaded process stays off libc's
    // formatting.
    char directory_path[32] = "/proc/";
    char digits[12];
    int length_of_pid = 0;
    for (unsigned value = (unsigned)peer.pid; length_of_pid == 0 || value > 0; value /= 10)
        digits[length_of_pid++] = (char)('0' + value % 10);
    for (int i = 0; i < length_of_pid; i++) directory_path[6 + i] = digits[length_of_pid - 1 - i];
    directory_path[6 + length_of_pid] = '\0';
    int directory = open(directory_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int pidfd = (int)syscall(SYS_pidfd_open, peer.pid, 0);
    int loop = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event interest = {.events = EPOLLIN, .data.fd = connection};
    if (directory < 0 || pidfd < 0 || loop < 0 || epoll_ctl(loop, EPOLL_CTL_ADD, connection, &interest) != 0)
        _exit(1);
    char chunk[65536];
    union {
        char bytes[CMSG_SPACE(sizeof(struct ucred))];
        struct cmsghdr align;
    } control;
    for (;;) {
        struct epoll_event event;
        int ready = epoll_wait(loop, &event, 1, -1);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) _exit(1);
        struct iovec vector = {.iov_base = chunk, .iov_len = sizeof(chunk)};
        struct msghdr message = {
            .msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.bytes, .msg_controllen = sizeof(control.bytes)};
        ssize_t count = recvmsg(connection, &message, MSG_CMSG_CLOEXEC);
        if (count < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (count <= 0) _exit(0);
        pid_t writer = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&message); c != NULL; c = CMSG_NXTHDR(&message, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
                struct ucred credentials;
                memcpy(&credentials, CMSG_DATA(c), sizeof(credentials));
                writer = credentials.pid;
            }
        }
        if (chunk[count - 1] != '\0') continue;  // Until the message's NUL (the client sends one at a time).
        struct stat info;
        struct pollfd exited = {.fd = pidfd, .events = POLLIN};
        if (writer != peer.pid) _exit(0);
        if (identity_checks && (fstatat(directory, "stat", &info, AT_SYMLINK_NOFOLLOW) != 0 ||
                                (peer.uid != 0 && info.st_uid != 0) || poll(&exited, 1, 0) != 0))
            _exit(0);
        if (send(connection, reply, length, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)length) _exit(0);
    }
}

static int32_t spawn(const char *path, size_t reply_length, int cpu, void (*serve)(int, const char *, size_t)) {
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(address.sun_path)) return -ENAMETOOLONG;
    strcpy(address.sun_path, path);
    // The reply (spaces, then the NUL) is made before the fork: the child allocates nothing.
    char *reply = malloc(reply_length + 1);
    if (reply == NULL) return -ENOMEM;
    memset(reply, ' ', reply_length);
    reply[reply_length] = '\0';
    unlink(path);
    int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener < 0 || bind(listener, (struct sockaddr *)&address, sizeof(address)) != 0 || listen(listener, 4) != 0) {
        int error = errno;
        if (listener >= 0) close(listener);
        free(reply);
        return -error;
    }
    pid_t child = fork();
    if (child < 0) {
        int error = errno;
        close(listener);
        free(reply);
        return -error;
    }
    if (child == 0) {
        if (cpu >= 0) set_affinity(0, cpu);
        serve(listener, reply, reply_length + 1);
    }
    close(listener);
    free(reply);
    return child;
}

int32_t ccb_echo_spawn(const char *path, size_t reply_length, int cpu) {
    return spawn(path, reply_length, cpu, serve_echo);
}

static void serve_floor_checking(int listener, const char *reply, size_t length) {
    serve_floor(listener, reply, length, 1);
}

static void serve_floor_unchecked(int listener, const char *reply, size_t length) {
    serve_floor(listener, reply, length, 0);
}

int32_t ccb_floor_spawn(const char *path, size_t reply_length, int cpu, int checks) {
    return spawn(path, reply_length, cpu, checks ? serve_floor_checking : serve_floor_unchecked);
}

void ccb_echo_stop(int32_t pid) {
    kill(pid, SIGKILL);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
}

int32_t ccb_peer_pid(int fd) {
    struct ucred credentials;
    socklen_t length = sizeof(credentials);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -errno;
    return credentials.pid;
}
