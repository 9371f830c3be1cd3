#define _GNU_SOURCE
#include "CCordonDocuments.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef F_SEAL_SEAL
#define F_SEAL_SEAL 0x0001
#define F_SEAL_SHRINK 0x0002
#define F_SEAL_GROW 0x0004
#define F_SEAL_WRITE 0x0008
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS (1024 + 9)
#define F_GET_SEALS (1024 + 10)
#endif

static const int document_seals = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

int cordon_document_seals(void) { return document_seals; }

int cordon_memfd_seals(int fd) {
    int seals = fcntl(fd, F_GET_SEALS);
    return seals < 0 ? -errno : seals;
}

/// How the range is copied; a method the kernel refuses for this pair of files is not tried again.
enum method { COPY_FILE_RANGE, SENDFILE, READ_WRITE };

static int fallback_errno(int error) {
    return error == EXDEV || error == EINVAL || error == ENOSYS || error == EOPNOTSUPP || error == EBADF;
}

/// Copies up to `length` bytes at `offset` from `source` to the same offset of `target`. Returns
/// the bytes copied (fewer at the end of `source`) or -errno.
static int64_t copy_range(int source, int target, off_t offset, int64_t length, enum method *method) {
    int64_t done = 0;
    while (done < length) {
        size_t chunk = (size_t)((length - done) > (1 << 30) ? (1 << 30) : (length - done));
        ssize_t n = -1;
        if (*method == COPY_FILE_RANGE) {
            loff_t in = offset + done, out = offset + done;
            n = copy_file_range(source, &in, target, &out, chunk, 0);
            if (n < 0 && fallback_errno(errno)) {
                *method = SENDFILE;
                continue;
            }
        } else if (*method == SENDFILE) {
            off_t in = offset + done;
            if (lseek(target, offset + done, SEEK_SET) < 0) return -errno;
            n = sendfile(target, source, &in, chunk);
            if (n < 0 && fallback_errno(errno)) {
                *method = READ_WRITE;
                continue;
            }
        } else {
            static const size_t buffer_size = 1 << 20;
            char *buffer = malloc(buffer_size);
            if (buffer == NULL) return -ENOMEM;
            size_t want = chunk < buffer_size ? chunk : buffer_size;
            n = pread(source, buffer, want, offset + done);
            ssize_t written = 0;
            while (n > 0 && written < n) {
                ssize_t w = pwrite(target, buffer + written, (size_t)(n - written), offset + done + written);
                if (w < 0 && errno == EINTR) continue;
                if (w <= 0) {
                    int error = w < 0 ? errno : EIO;
                    free(buffer);
                    return -error;
                }
                written += w;
            }
            free(buffer);
        }
        if (n < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        if (n == 0) break;  // the end of the file came early (it shrank)
        done += n;
    }
    return done;
}

int cordon_document_snapshot(int source, int64_t size, int64_t limit, int64_t *copied) {
    if (size < 0) return -EINVAL;
    int memfd = memfd_create("cordon-document", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (memfd < 0) return -errno;
    int error = 0;
    if (ftruncate(memfd, size) != 0) {
        error = errno;
        goto fail;
    }
    enum method method = COPY_FILE_RANGE;
    int64_t total = 0;
    off_t position = 0;
    while (position < size) {
        off_t data = lseek(source, position, SEEK_DATA);
        if (data < 0) {
            if (errno == ENXIO) break;  // only a hole is left
            if (errno != EINVAL) {
                error = errno;
                goto fail;
            }
            data = position;  // no SEEK_DATA here: all of it is data
        }
        if (data >= size) break;
        off_t hole = lseek(source, data, SEEK_HOLE);
        if (hole < 0 || hole > size) hole = size;
        if (hole <= data) hole = size;
        if (total + (hole - data) > limit) {
            error = EFBIG;
            goto fail;
        }
        int64_t n = copy_range(source, memfd, data, hole - data, &method);
        if (n < 0) {
            error = (int)-n;
            goto fail;
        }
        total += n;
        if (n < hole - data) break;  // it shrank: the rest stays zero
        position = hole;
    }
    if (fcntl(memfd, F_ADD_SEALS, document_seals) != 0 || lseek(memfd, 0, SEEK_SET) != 0) {
        error = errno;
        goto fail;
    }
    *copied = total;
    return memfd;
fail:
    close(memfd);
    return -error;
}

int cordon_filesystem_type(int fd, int64_t *type) {
    struct statfs status;
    if (fstatfs(fd, &status) != 0) return -errno;
    *type = (int64_t)(uint32_t)status.f_type;
    return 0;
}

int cordon_o_path(void) { return O_PATH; }
