#ifndef CNATS_LOOP_H
#define CNATS_LOOP_H

#include <nats/nats.h>

/// One epoll event loop on a thread of its own, serving many NATS connections through the C
/// client's external-event-loop API: no reader or flusher thread per connection.
typedef struct cordon_nats_loop cordon_nats_loop;

/// Starts a loop and its thread; NULL when the system refused an epoll set, an eventfd or a thread.
cordon_nats_loop *cordon_nats_loop_start(void);

/// Sets `options` to use the loop: the adapter's callbacks, sends without the flusher thread,
/// messages delivered by the library's shared pool instead of a thread per subscription.
natsStatus cordon_nats_loop_attach(cordon_nats_loop *loop, natsOptions *options);

/// Runs `work(context)` on the loop's thread and returns when it has run. Must not be called from
/// the loop's thread.
void cordon_nats_loop_run(cordon_nats_loop *loop, void (*work)(void *context), void *context);

/// Stops the loop and joins its thread (connections on it must be closed first).
void cordon_nats_loop_stop(cordon_nats_loop *loop);

#endif
