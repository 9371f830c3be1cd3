// The NATS C client's libuv adapter is a header of definitions: it is compiled here, once.
#include <nats/adapters/libuv.h>
#include <stdlib.h>
#include "cnats_loop.h"

typedef struct job {
    void (*work)(void *context);
    void *context;
    uv_sem_t done;
    struct job *next;
} job;

struct cordon_nats_loop {
    uv_loop_t loop;
    uv_async_t wake;
    uv_mutex_t lock;
    uv_thread_t thread;
    uv_sem_t started;
    job *head;
    job *tail;
    int stopping;
};

static void run_jobs(uv_async_t *handle) {
    cordon_nats_loop *self = (cordon_nats_loop *)handle->data;
    for (;;) {
        uv_mutex_lock(&self->lock);
        job *next = self->head;
        if (next != NULL) {
            self->head = next->next;
            if (self->head == NULL) self->tail = NULL;
        }
        int stopping = self->stopping;
        uv_mutex_unlock(&self->lock);
        if (next == NULL) {
            if (stopping) uv_stop(&self->loop);
            return;
        }
        next->work(next->context);
        uv_sem_post(&next->done);
    }
}

static void loop_main(void *argument) {
    cordon_nats_loop *self = (cordon_nats_loop *)argument;
    natsLibuv_SetThreadLocalLoop(&self->loop);
    uv_sem_post(&self->started);
    uv_run(&self->loop, UV_RUN_DEFAULT);
}

static uv_once_t adapter_once = UV_ONCE_INIT;
static void adapter_init(void) { natsLibuv_Init(); }

cordon_nats_loop *cordon_nats_loop_start(void) {
    uv_once(&adapter_once, adapter_init);
    cordon_nats_loop *self = calloc(1, sizeof(cordon_nats_loop));
    if (self == NULL) return NULL;
    if (uv_loop_init(&self->loop) != 0) {
        free(self);
        return NULL;
    }
    uv_mutex_init(&self->lock);
    uv_sem_init(&self->started, 0);
    uv_async_init(&self->loop, &self->wake, run_jobs);
    self->wake.data = self;
    if (uv_thread_create(&self->thread, loop_main, self) != 0) {
        uv_close((uv_handle_t *)&self->wake, NULL);
        uv_run(&self->loop, UV_RUN_NOWAIT);
        uv_loop_close(&self->loop);
        free(self);
        return NULL;
    }
    uv_sem_wait(&self->started);
    return self;
}

natsStatus cordon_nats_loop_attach(cordon_nats_loop *loop, natsOptions *options) {
    natsStatus status = natsOptions_SetEventLoop(
        options, &loop->loop, natsLibuv_Attach, natsLibuv_Read, natsLibuv_Write, natsLibuv_Detach);
    if (status == NATS_OK) status = natsOptions_SetSendAsap(options, true);
    if (status == NATS_OK) status = natsOptions_UseGlobalMessageDelivery(options, true);
    return status;
}

void cordon_nats_loop_run(cordon_nats_loop *loop, void (*work)(void *context), void *context) {
    job item = {work, context, {0}, NULL};
    uv_sem_init(&item.done, 0);
    uv_mutex_lock(&loop->lock);
    if (loop->tail != NULL) loop->tail->next = &item; else loop->head = &item;
    loop->tail = &item;
    uv_mutex_unlock(&loop->lock);
    uv_async_send(&loop->wake);
    uv_sem_wait(&item.done);
    uv_sem_destroy(&item.done);
}

void cordon_nats_loop_stop(cordon_nats_loop *loop) {
    uv_mutex_lock(&loop->lock);
    loop->stopping = 1;
    uv_mutex_unlock(&loop->lock);
    uv_async_send(&loop->wake);
    uv_thread_join(&loop->thread);
    uv_close((uv_handle_t *)&loop->wake, NULL);
    uv_run(&loop->loop, UV_RUN_NOWAIT);
    uv_loop_close(&loop->loop);
    uv_mutex_destroy(&loop->lock);
    uv_sem_destroy(&loop->started);
    free(loop);
}
