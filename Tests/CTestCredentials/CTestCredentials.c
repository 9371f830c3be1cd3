#define _GNU_SOURCE
#include "CTestCredentials.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

int cordon_test_connect_as(const char *path, uid_t uid, gid_t gid) {
    // glibc's setresuid changes every thread; the system call changes only this one.
    if (syscall(SYS_setresgid, -1, gid, -1) != 0) return -errno;
    if (syscall(SYS_setresuid, -1, uid, -1) != 0) {
        int error = errno;
        syscall(SYS_setresgid, -1, 0, -1);
        return -error;
    }
    int error = 0;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        error = errno;
    } else {
        struct sockaddr_un address = {.sun_family = AF_UNIX};
        strncpy(address.sun_path, path, sizeof address.sun_path - 1);
        if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
            error = errno;
            close(fd);
        }
    }
    // The real and saved uid stayed root: the effective uid (and its capabilities) come back.
    syscall(SYS_setresuid, -1, 0, -1);
    syscall(SYS_setresgid, -1, 0, -1);
    return error ? -error : fd;
}
