#ifndef CCORDON_SQLITE_PROBE_H
#define CCORDON_SQLITE_PROBE_H

#include <stdint.h>

/// A read-only SQLite connection that answers one question: the file's `PRAGMA data_version`
/// (which moves when any other connection commits). RecordCache asks it on every held read, on
/// the agent's loop; through GRDB that was a `DispatchQueue.sync` into the queue's own thread per
/// read (docs/PERFORMANCE.md, "Data calls on the loop"). Not thread-safe: one caller at a time.
typedef struct cordon_sqlite_probe cordon_sqlite_probe;

/// Opens `path` read-only (never creating it), with no busy wait; NULL when it cannot be opened.
cordon_sqlite_probe *cordon_sqlite_probe_open(const char *path);

/// Stores the file's data version in `*version` and returns 0; -1 when SQLite cannot answer at
/// once (a busy or broken file): the caller treats that as a miss.
int cordon_sqlite_probe_version(cordon_sqlite_probe *probe, int64_t *version);

/// Closes the connection and frees the probe.
void cordon_sqlite_probe_close(cordon_sqlite_probe *probe);

#endif
