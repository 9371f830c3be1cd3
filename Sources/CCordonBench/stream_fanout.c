#define _GNU_SOURCE
#include "CCordonBench.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define MAX_EVENTS 256

/// One subscriber: its socket, the bytes of a frame not complete yet, the round it finished.
struct stream_conn {
    int fd;
    char *partial;
    size_t length;
    size_t capacity;
    uint64_t done_round;
};

struct ccb_stream_fanout {
    int epoll_fd;
    int count;
    uint64_t round;
    struct stream_conn *conns;
    char scratch[65536];
};

int ccb_stream_fanout_new(const int *fds, int count, ccb_stream_fanout **out) {
    ccb_stream_fanout *fanout = calloc(1, sizeof(*fanout));
    if (fanout == NULL) return -ENOMEM;
    fanout->count = count;
    fanout->conns = calloc((size_t)(count > 0 ? count : 1), sizeof(struct stream_conn));
    fanout->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (fanout->conns == NULL || fanout->epoll_fd < 0) {
        ccb_stream_fanout_free(fanout);
        return -ENOMEM;
    }
    for (int i = 0; i < count; i++) {
        fanout->conns[i].fd = fds[i];
        struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        if (epoll_ctl(fanout->epoll_fd, EPOLL_CTL_ADD, fds[i], &event) != 0) {
            int error = errno;
            ccb_stream_fanout_free(fanout);
            return -error;
        }
    }
    *out = fanout;
    return 0;
}

/// Appends `bytes` to the connection's partial frame.
static int append(struct stream_conn *conn, const char *bytes, size_t length) {
    if (conn->length + length > conn->capacity) {
        size_t capacity = conn->capacity ? conn->capacity : 1024;
        while (capacity < conn->length + length) capacity *= 2;
        char *grown = realloc(conn->partial, capacity);
        if (grown == NULL) return -ENOMEM;
        conn->partial = grown;
        conn->capacity = capacity;
    }
    memcpy(conn->partial + conn->length, bytes, length);
    conn->length += length;
    return 0;
}

/// Reads what one readable socket has; returns 1 when it completed its matching frame this
/// round, 0 when not yet, or -errno.
static int receive(ccb_stream_fanout *fanout, struct stream_conn *conn, const char *needle, size_t needle_length) {
    ssize_t count = read(conn->fd, fanout->scratch, sizeof(fanout->scratch));
    if (count < 0) return errno == EINTR || errno == EAGAIN ? 0 : -errno;
    if (count == 0) return -EPIPE;
    int finished = 0;
    const char *cursor = fanout->scratch;
    const char *end = fanout->scratch + count;
    while (cursor < end) {
        const char *nul = memchr(cursor, '\0', (size_t)(end - cursor));
        if (nul == NULL) {
            if (append(conn, cursor, (size_t)(end - cursor)) != 0) return -ENOMEM;
            break;
        }
        const char *frame = cursor;
        size_t length = (size_t)(nul - cursor);
        if (conn->length > 0) {  // The frame began in an earlier read.
            if (append(conn, cursor, length) != 0) return -ENOMEM;
            frame = conn->partial;
            length = conn->length;
        }
        if (conn->done_round != fanout->round && memmem(frame, length, needle, needle_length) != NULL) {
            conn->done_round = fanout->round;
            finished = 1;
        }
        conn->length = 0;
        cursor = nul + 1;
    }
    return finished;
}

int64_t ccb_stream_fanout_wait(ccb_stream_fanout *fanout, const char *needle, int timeout_ms) {
    size_t needle_length = strlen(needle);
    fanout->round++;
    int remaining = fanout->count;
    int64_t last = ccb_now_ns();
    int64_t deadline = last + (int64_t)timeout_ms * 1000000;
    struct epoll_event events[MAX_EVENTS];
    while (remaining > 0) {
        int64_t left_ms = (deadline - ccb_now_ns()) / 1000000;
        if (left_ms <= 0) return -ETIMEDOUT;
        int ready = epoll_wait(fanout->epoll_fd, events, MAX_EVENTS, (int)left_ms);
        if (ready < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        for (int i = 0; i < ready; i++) {
            struct stream_conn *conn = &fanout->conns[events[i].data.u32];
            int r = receive(fanout, conn, needle, needle_length);
            if (r < 0) return r;
            if (r > 0) {
                remaining--;
                last = ccb_now_ns();
            }
        }
    }
    return last;
}

void ccb_stream_fanout_free(ccb_stream_fanout *fanout) {
    if (fanout == NULL) return;
    if (fanout->epoll_fd >= 0) close(fanout->epoll_fd);
    if (fanout->conns != NULL) {
        for (int i = 0; i < fanout->count; i++) free(fanout->conns[i].partial);
        free(fanout->conns);
    }
    free(fanout);
}
