#define _GNU_SOURCE
#include "CCordonLinux.h"
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef PIDFD_SIGNAL_PROCESS_GROUP
#define PIDFD_SIGNAL_PROCESS_GROUP (1UL << 2)
#endif
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

int cordon_set_nondumpable(void) {
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 ? 0 : -errno;
}

int cordon_set_dumpable(void) {
    return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == 0 ? 0 : -errno;
}

int cordon_get_dumpable(void) {
    int r = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    return r < 0 ? -errno : r;
}

int cordon_pidfd_open(pid_t pid) {
    long r = syscall(SYS_pidfd_open, pid, 0);
    return r < 0 ? -errno : (int)r;
}

int cordon_pidfd_send_signal(int pidfd, int sig) {
    long r = syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
    return r < 0 ? -errno : 0;
}

int cordon_pidfd_signal_group(int pidfd, int sig) {
    long r = syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, PIDFD_SIGNAL_PROCESS_GROUP);
    return r < 0 ? -errno : 0;
}

int cordon_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid) {
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -errno;
    *pid = cred.pid;
    *uid = cred.uid;
    *gid = cred.gid;
    return 0;
}

int cordon_peer_pidfd(int fd) {
    int pidfd = -1;
    socklen_t len = sizeof(pidfd);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) != 0) return -errno;
    return pidfd;
}

int cordon_protect_memory(void *addr, size_t len) {
    int rc = 0;
    if (mlock(addr, len) != 0) rc = -errno;
    /* madvise needs page alignment: cover the pages that hold the range. */
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)addr & ~((uintptr_t)page - 1);
    uintptr_t end = ((uintptr_t)addr + len + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    if (madvise((void *)start, end - start, MADV_DONTDUMP) != 0 && rc == 0) rc = -errno;
    return rc;
}

void cordon_unprotect_memory(void *addr, size_t len) {
    munlock(addr, len);
}

void cordon_secure_zero(void *addr, size_t len) {
    explicit_bzero(addr, len);
}

#include <sys/un.h>

int cordon_probe_unix_socket(const char *path) {
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof(addr));
    addr.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(addr.sun_path)) return -ENAMETOOLONG;
    strcpy(addr.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    int rc = connect(fd, (struct sockaddr *)&addr, sizeof(addr));
    int err = errno;
    close(fd);
    if (rc == 0) return 1;
    if (err == ECONNREFUSED) return 0;
    return -err;
}

#include <fcntl.h>

int cordon_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC) == 0 ? 0 : -errno;
}

#include <spawn.h>

int cordon_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    return -posix_spawn_file_actions_addclosefrom_np(actions, lowest);
#else
    (void)actions;
    (void)lowest;
    return -ENOSYS;
#endif
}

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>

#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

int cordon_socket_with_cookie(uint64_t cookie) {
    DIR *dir = opendir("/proc/self/fd");
    if (dir == NULL) return -errno;
    int found = -ENOENT;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
        int fd = atoi(entry->d_name);
        if (fd == dirfd(dir)) continue;
        struct stat st;
        if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
        uint64_t value = 0;
        socklen_t size = sizeof(value);
        if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, &value, &size) == 0 && value == cookie) {
            found = fd;
            break;
        }
    }
    closedir(dir);
    return found;
}

int cordon_socket_cookie(int fd, uint64_t *cookie) {
    uint64_t value = 0;
    socklen_t size = sizeof(value);
    if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, &value, &size) != 0) return -errno;
    if (size != sizeof(value)) return -EINVAL;
    *cookie = value;
    return 0;
}

long cordon_send_nonblocking(int sock, const void *buf, size_t len) {
    ssize_t sent;
    do {
        sent = send(sock, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    return sent < 0 ? -errno : (long)sent;
}

long cordon_send_with_descriptor(int sock, const void *buf, size_t len, int fd) {
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    union {
        char bytes[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof(control));
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.bytes;
    msg.msg_controllen = sizeof(control.bytes);
    struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
    ssize_t sent;
    do {
        sent = sendmsg(sock, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    return sent < 0 ? -errno : (long)sent;
}

#include <linux/nsfs.h>
#include <stdio.h>
#include <sys/ioctl.h>

int cordon_user_namespace_owner(pid_t pid, uid_t *owner, unsigned long long *inode) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    struct stat info;
    if (fstat(fd, &info) != 0) {
        int saved = errno;
        close(fd);
        return -saved;
    }
    *inode = (unsigned long long)info.st_ino;
    uid_t uid = 0;
    int result = ioctl(fd, NS_GET_OWNER_UID, &uid);
    int saved = errno;
    close(fd);
    if (result != 0) return -saved;
    *owner = uid;
    return 0;
}

#include <sys/resource.h>

int cordon_lower_thread_priority(int increment, int *after) {
    pid_t tid = gettid();
    errno = 0;
    int now = getpriority(PRIO_PROCESS, (id_t)tid);
    if (now == -1 && errno != 0) return -errno;
    if (setpriority(PRIO_PROCESS, (id_t)tid, now + increment) != 0) return -errno;
    errno = 0;
    *after = getpriority(PRIO_PROCESS, (id_t)tid);
    return (*after == -1 && errno != 0) ? -errno : 0;
}

pid_t cordon_gettid(void) { return gettid(); }
