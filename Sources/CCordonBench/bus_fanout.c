#define _GNU_SOURCE
#include "CCordonBench.h"
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#define MAX_EVENTS 256

struct ccb_bus_fanout;

/// One receiver: its connection, the round in which its match last fired.
struct bus_conn {
    sd_bus *bus;
    struct ccb_bus_fanout *owner;
    uint64_t done_round;
};

struct ccb_bus_fanout {
    int epoll_fd;
    int count;
    int opened;
    uint64_t round;
    int remaining;
    int64_t last;
    struct bus_conn *conns;
};

static int open_bus(const char *address, sd_bus **out) {
    sd_bus *bus = NULL;
    int r = sd_bus_new(&bus);
    if (r < 0) return r;
    r = sd_bus_set_address(bus, address);
    if (r >= 0) r = sd_bus_set_bus_client(bus, 1);
    if (r >= 0) r = sd_bus_start(bus);
    if (r < 0) {
        sd_bus_flush_close_unref(bus);
        return r;
    }
    *out = bus;
    return 0;
}

static int on_signal(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    (void)message;
    (void)error;
    struct bus_conn *conn = userdata;
    struct ccb_bus_fanout *fanout = conn->owner;
    if (conn->done_round != fanout->round) {
        conn->done_round = fanout->round;
        fanout->remaining--;
        fanout->last = ccb_now_ns();
    }
    return 1;
}

/// Runs sd_bus_process until the connection has nothing left to dispatch.
static int drain(sd_bus *bus) {
    int r;
    while ((r = sd_bus_process(bus, NULL)) > 0) {
    }
    return r;
}

int ccb_bus_fanout_open(const char *address, int count, const char *match, ccb_bus_fanout **out) {
    ccb_bus_fanout *fanout = calloc(1, sizeof(*fanout));
    if (fanout == NULL) return -ENOMEM;
    fanout->count = count;
    fanout->conns = calloc((size_t)(count > 0 ? count : 1), sizeof(struct bus_conn));
    fanout->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (fanout->conns == NULL || fanout->epoll_fd < 0) {
        ccb_bus_fanout_free(fanout);
        return -ENOMEM;
    }
    for (int i = 0; i < count; i++) {
        struct bus_conn *conn = &fanout->conns[i];
        conn->owner = fanout;
        int r = open_bus(address, &conn->bus);
        if (r >= 0) {
            fanout->opened++;
            r = sd_bus_add_match(conn->bus, NULL, match, on_signal, conn);
        }
        if (r >= 0) r = drain(conn->bus);
        if (r >= 0) {
            struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
            r = epoll_ctl(fanout->epoll_fd, EPOLL_CTL_ADD, sd_bus_get_fd(conn->bus), &event) == 0 ? 0 : -errno;
        }
        if (r < 0) {
            ccb_bus_fanout_free(fanout);
            return r;
        }
    }
    *out = fanout;
    return 0;
}

int64_t ccb_bus_fanout_wait(ccb_bus_fanout *fanout, int timeout_ms) {
    fanout->round++;
    fanout->remaining = fanout->count;
    fanout->last = ccb_now_ns();
    int64_t deadline = fanout->last + (int64_t)timeout_ms * 1000000;
    struct epoll_event events[MAX_EVENTS];
    while (fanout->remaining > 0) {
        int64_t left_ms = (deadline - ccb_now_ns()) / 1000000;
        if (left_ms <= 0) return -ETIMEDOUT;
        int ready = epoll_wait(fanout->epoll_fd, events, MAX_EVENTS, (int)left_ms);
        if (ready < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        for (int i = 0; i < ready; i++) {
            int r = drain(fanout->conns[events[i].data.u32].bus);
            if (r < 0) return r;
        }
    }
    return fanout->last;
}

void ccb_bus_fanout_free(ccb_bus_fanout *fanout) {
    if (fanout == NULL) return;
    if (fanout->epoll_fd >= 0) close(fanout->epoll_fd);
    if (fanout->conns != NULL) {
        for (int i = 0; i < fanout->opened; i++) sd_bus_flush_close_unref(fanout->conns[i].bus);
        free(fanout->conns);
    }
    free(fanout);
}

int ccb_bus_sender_open(const char *address, sd_bus **out) {
    return open_bus(address, out);
}

int ccb_bus_emit(sd_bus *bus, uint64_t seq, double time) {
    int r = sd_bus_emit_signal(
        bus, "/io/cordon/Bench", "io.cordon.Bench", "DidLock", "tsssd", seq, "DidLock", "userRequest",
        "lockedKeyHeld", time);
    if (r < 0) return r;
    return sd_bus_flush(bus);
}

void ccb_bus_close(sd_bus *bus) {
    sd_bus_flush_close_unref(bus);
}
