#define _GNU_SOURCE
#include "CCordonBench.h"
#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int64_t ccb_now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

int64_t ccb_thread_cpu_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

int64_t ccb_process_cpu_ns(int32_t pid) {
    clockid_t clock;
    if (clock_getcpuclockid(pid, &clock) != 0) return -1;
    struct timespec now;
    if (clock_gettime(clock, &now) != 0) return -errno;
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

int64_t ccb_raise_nofile(uint64_t wanted) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return -errno;
    if (limit.rlim_cur >= wanted) return (int64_t)limit.rlim_cur;
    if (limit.rlim_max < wanted) {
        struct rlimit raised = {wanted, wanted};
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0) return (int64_t)wanted;
        limit.rlim_cur = limit.rlim_max;  // Unprivileged: the hard limit is as far as it goes.
    } else {
        limit.rlim_cur = wanted;
    }
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return -errno;
    return (int64_t)limit.rlim_cur;
}

int ccb_unix_connect(const char *path) {
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(address.sun_path)) return -ENAMETOOLONG;
    strcpy(address.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    if (connect(fd, (struct sockaddr *)&address, sizeof(address)) != 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    return fd;
}

int ccb_write_all(int fd, const void *bytes, size_t length) {
    const char *cursor = bytes;
    while (length > 0) {
        ssize_t written = write(fd, cursor, length);
        if (written < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        cursor += written;
        length -= (size_t)written;
    }
    return 0;
}

int64_t ccb_read_message(int fd, char *buffer, size_t capacity) {
    size_t total = 0;
    char chunk[4096];
    for (;;) {
        ssize_t count = read(fd, chunk, sizeof(chunk));
        if (count < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        if (count == 0) return -EPIPE;
        for (ssize_t i = 0; i < count; i++) {
            if (total + 1 < capacity) buffer[total] = chunk[i];
            if (chunk[i] == '\0') {
                buffer[total + 1 < capacity ? total : capacity - 1] = '\0';
                return (int64_t)total;
            }
            total++;
        }
    }
}
