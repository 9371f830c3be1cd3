// An event loop on epoll for the NATS C client's external-event-loop API (nats.c 3.4.1, Debian's
// libnats), in place of its libuv adapter. In 3.4.1 a reconnecting connection asks the adapter to
// stop polling its socket and then closes the socket at once; the libuv adapter only queued the
// request for its loop, so the loop kept polling a closed descriptor that the next socket (this
// connection's or another's) could reuse: writes never sent, live messages never heard, and
// `uv_run` aborting (docs/PERFORMANCE.md, "Fleet push").
//
// Here a change of interest is made in the poll set by the thread that asks for it, before the
// library goes on (`epoll_ctl` is thread-safe), so a descriptor the library closes is never in
// the set. Each connection's state has two locks:
// - `lock` guards the socket and the interest; the library's calls take it (they come with the
//   connection's lock held, so nothing holding `lock` may wait for the library);
// - `dispatch` (recursive) is held by the loop's thread while it calls into the library for the
//   connection, and by `detach`, so a connection is never called into after it was detached (the
//   library may then free it). The library may detach from inside such a call, on the loop's
//   thread: hence recursive.
// States are freed when the loop stops (a detached connection's is a few dozen bytes).
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cnats_loop.h"

typedef struct connection_state {
    natsConnection *nc;
    cordon_nats_loop *loop;
    pthread_mutex_t lock;
    pthread_mutex_t dispatch;
    /// The socket in the poll set, or -1.
    int socket;
    /// EPOLLIN and EPOLLOUT as the library asked.
    uint32_t interest;
    bool detached;
    struct connection_state *next;
} connection_state;

typedef struct job {
    void (*work)(void *context);
    void *context;
    bool done;
    struct job *next;
} job;

struct cordon_nats_loop {
    int epoll;
    int wake;
    pthread_t thread;
    /// Guards the jobs, `stopping` and the list of states.
    pthread_mutex_t lock;
    pthread_cond_t finished;
    job *head;
    job *tail;
    bool stopping;
    connection_state *states;
};

static void wake(cordon_nats_loop *loop) {
    uint64_t one = 1;
    while (write(loop->wake, &one, sizeof one) < 0 && errno == EINTR) {}
}

/// Puts the socket in the poll set with the current interest, or updates it (`state->lock` held).
static natsStatus poll_update(connection_state *state) {
    if (state->socket < 0) return NATS_OK;
    struct epoll_event event = {.events = state->interest, .data.ptr = state};
    if (epoll_ctl(state->loop->epoll, EPOLL_CTL_MOD, state->socket, &event) == 0) return NATS_OK;
    if (errno == ENOENT && epoll_ctl(state->loop->epoll, EPOLL_CTL_ADD, state->socket, &event) == 0) return NATS_OK;
    return NATS_ERR;
}

/// Takes the socket out of the poll set before the library closes it (`state->lock` held).
static void poll_remove(connection_state *state) {
    if (state->socket < 0) return;
    (void)epoll_ctl(state->loop->epoll, EPOLL_CTL_DEL, state->socket, NULL);
    state->socket = -1;
    state->interest = 0;
}

static natsStatus loop_attach(void **user_data, void *loop_pointer, natsConnection *nc, natsSock socket) {
    cordon_nats_loop *loop = loop_pointer;
    connection_state *state = *user_data;
    if (state == NULL) {
        state = calloc(1, sizeof(connection_state));
        if (state == NULL) return NATS_NO_MEMORY;
        state->nc = nc;
        state->loop = loop;
        state->socket = -1;
        pthread_mutex_init(&state->lock, NULL);
        pthread_mutexattr_t recursive;
        pthread_mutexattr_init(&recursive);
        pthread_mutexattr_settype(&recursive, PTHREAD_MUTEX_RECURSIVE);
        pthread_mutex_init(&state->dispatch, &recursive);
        pthread_mutexattr_destroy(&recursive);
        pthread_mutex_lock(&loop->lock);
        state->next = loop->states;
        loop->states = state;
        pthread_mutex_unlock(&loop->lock);
        *user_data = state;
    }
    pthread_mutex_lock(&state->lock);
    // After a reconnect the old socket was removed when the library stopped polling it.
    poll_remove(state);
    state->socket = (int)socket;
    state->interest = EPOLLIN;
    natsStatus status = poll_update(state);
    pthread_mutex_unlock(&state->lock);
    return status;
}

static natsStatus change(void *user_data, uint32_t flag, bool add) {
    connection_state *state = user_data;
    natsStatus status = NATS_OK;
    pthread_mutex_lock(&state->lock);
    if (add) {
        state->interest |= flag;
        status = poll_update(state);
    } else if (flag == EPOLLIN) {
        // The library stops reading only to close the socket (a reconnect, or the end).
        poll_remove(state);
    } else {
        state->interest &= ~flag;
        status = poll_update(state);
    }
    pthread_mutex_unlock(&state->lock);
    return status;
}

static natsStatus loop_read(void *user_data, bool add) { return change(user_data, EPOLLIN, add); }

static natsStatus loop_write(void *user_data, bool add) { return change(user_data, EPOLLOUT, add); }

static natsStatus loop_detach(void *user_data) {
    connection_state *state = user_data;
    pthread_mutex_lock(&state->dispatch);
    pthread_mutex_lock(&state->lock);
    poll_remove(state);
    state->detached = true;
    pthread_mutex_unlock(&state->lock);
    pthread_mutex_unlock(&state->dispatch);
    return NATS_OK;
}

/// Calls into the library for one ready connection, unless it was detached or its socket left
/// the poll set since the event was taken.
static void dispatch(connection_state *state, uint32_t ready) {
    pthread_mutex_lock(&state->dispatch);
    pthread_mutex_lock(&state->lock);
    bool live = !state->detached && state->socket >= 0;
    uint32_t interest = state->interest;
    pthread_mutex_unlock(&state->lock);
    if (live && (ready & (EPOLLIN | EPOLLHUP | EPOLLERR)) && (interest & EPOLLIN))
        natsConnection_ProcessReadEvent(state->nc);
    pthread_mutex_lock(&state->lock);
    live = !state->detached && state->socket >= 0;
    interest = state->interest;
    pthread_mutex_unlock(&state->lock);
    if (live && (ready & EPOLLOUT) && (interest & EPOLLOUT)) natsConnection_ProcessWriteEvent(state->nc);
    pthread_mutex_unlock(&state->dispatch);
}

/// Runs the queued jobs; true when the loop is to stop.
static bool run_jobs(cordon_nats_loop *loop) {
    for (;;) {
        pthread_mutex_lock(&loop->lock);
        job *next = loop->head;
        if (next != NULL) {
            loop->head = next->next;
            if (loop->head == NULL) loop->tail = NULL;
        }
        bool stopping = loop->stopping;
        pthread_mutex_unlock(&loop->lock);
        if (next == NULL) return stopping;
        next->work(next->context);
        pthread_mutex_lock(&loop->lock);
        next->done = true;
        pthread_cond_broadcast(&loop->finished);
        pthread_mutex_unlock(&loop->lock);
    }
}

static void *loop_main(void *argument) {
    cordon_nats_loop *loop = argument;
    struct epoll_event events[256];
    for (;;) {
        if (run_jobs(loop)) return NULL;
        int count = epoll_wait(loop->epoll, events, 256, -1);
        if (count < 0) {
            if (errno == EINTR) continue;
            abort();
        }
        for (int index = 0; index < count; index++) {
            connection_state *state = events[index].data.ptr;
            if (state == NULL) {
                uint64_t value;
                (void)read(loop->wake, &value, sizeof value);
            } else {
                dispatch(state, events[index].events);
            }
        }
    }
}

cordon_nats_loop *cordon_nats_loop_start(void) {
    cordon_nats_loop *loop = calloc(1, sizeof(cordon_nats_loop));
    if (loop == NULL) return NULL;
    loop->epoll = epoll_create1(EPOLL_CLOEXEC);
    loop->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event event = {.events = EPOLLIN, .data.ptr = NULL};
    if (loop->epoll < 0 || loop->wake < 0 || epoll_ctl(loop->epoll, EPOLL_CTL_ADD, loop->wake, &event) != 0) {
        if (loop->epoll >= 0) close(loop->epoll);
        if (loop->wake >= 0) close(loop->wake);
        free(loop);
        return NULL;
    }
    pthread_mutex_init(&loop->lock, NULL);
    pthread_cond_init(&loop->finished, NULL);
    if (pthread_create(&loop->thread, NULL, loop_main, loop) != 0) {
        close(loop->epoll);
        close(loop->wake);
        pthread_mutex_destroy(&loop->lock);
        pthread_cond_destroy(&loop->finished);
        free(loop);
        return NULL;
    }
    return loop;
}

natsStatus cordon_nats_loop_attach(cordon_nats_loop *loop, natsOptions *options) {
    natsStatus status = natsOptions_SetEventLoop(options, loop, loop_attach, loop_read, loop_write, loop_detach);
    if (status == NATS_OK) status = natsOptions_SetSendAsap(options, true);
    if (status == NATS_OK) status = natsOptions_UseGlobalMessageDelivery(options, true);
    return status;
}

void cordon_nats_loop_run(cordon_nats_loop *loop, void (*work)(void *context), void *context) {
    job item = {.work = work, .context = context};
    pthread_mutex_lock(&loop->lock);
    if (loop->tail != NULL) loop->tail->next = &item; else loop->head = &item;
    loop->tail = &item;
    pthread_mutex_unlock(&loop->lock);
    wake(loop);
    pthread_mutex_lock(&loop->lock);
    while (!item.done) pthread_cond_wait(&loop->finished, &loop->lock);
    pthread_mutex_unlock(&loop->lock);
}

void cordon_nats_loop_stop(cordon_nats_loop *loop) {
    pthread_mutex_lock(&loop->lock);
    loop->stopping = true;
    pthread_mutex_unlock(&loop->lock);
    wake(loop);
    pthread_join(loop->thread, NULL);
    close(loop->epoll);
    close(loop->wake);
    for (connection_state *state = loop->states; state != NULL;) {
        connection_state *next = state->next;
        pthread_mutex_destroy(&state->lock);
        pthread_mutex_destroy(&state->dispatch);
        free(state);
        state = next;
    }
    pthread_mutex_destroy(&loop->lock);
    pthread_cond_destroy(&loop->finished);
    free(loop);
}
