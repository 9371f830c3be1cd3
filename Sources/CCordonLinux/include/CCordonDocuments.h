#pragma once
#include <stdint.h>

/// Copies the first `size` bytes of the regular file `source` into a new memfd
/// (MFD_ALLOW_SEALING | MFD_CLOEXEC) and seals it (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW |
/// F_SEAL_SEAL): a snapshot no one can change. Only the file's data is copied (SEEK_DATA /
/// SEEK_HOLE): its holes stay holes in the memfd, costing no memory. The data is copied with
/// copy_file_range, else sendfile, else pread/pwrite. More than `limit` bytes of data is -EFBIG.
/// Returns the memfd (its offset at 0) with the bytes of data copied in `*copied`, or -errno.
int cordon_document_snapshot(int source, int64_t size, int64_t limit, int64_t *copied);
/// The seals of a memfd (F_GET_SEALS), or -errno.
int cordon_memfd_seals(int fd);
/// The seals `cordon_document_snapshot` sets.
int cordon_document_seals(void);
/// The `f_type` of the filesystem `fd` is on (fstatfs) in `*type`. Returns 0 or -errno.
int cordon_filesystem_type(int fd, int64_t *type);
/// O_PATH (which the C library declares only with _GNU_SOURCE).
int cordon_o_path(void);
