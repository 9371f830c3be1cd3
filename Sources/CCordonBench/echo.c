#define _GNU_SOURCE
#include "CCordonBench.h"
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

static void serve(int listener, const char *reply, size_t length) {
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

int32_t ccb_echo_spawn(const char *path, size_t reply_length, int cpu) {
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
