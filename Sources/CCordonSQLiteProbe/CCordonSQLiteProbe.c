#include "CCordonSQLiteProbe.h"

#include <sqlite3.h>
#include <stdlib.h>

struct cordon_sqlite_probe {
    sqlite3 *db;
    sqlite3_stmt *statement;
};

cordon_sqlite_probe *cordon_sqlite_probe_open(const char *path) {
    sqlite3 *db = NULL;
    // NOMUTEX: the caller keeps to one thread at a time; the connection's own mutex would be a
    // second lock per read.
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        sqlite3_close_v2(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 0);
    sqlite3_stmt *statement = NULL;
    if (sqlite3_prepare_v3(db, "PRAGMA data_version", -1, SQLITE_PREPARE_PERSISTENT, &statement, NULL) != SQLITE_OK) {
        sqlite3_close_v2(db);
        return NULL;
    }
    cordon_sqlite_probe *probe = malloc(sizeof *probe);
    if (probe == NULL) {
        sqlite3_finalize(statement);
        sqlite3_close_v2(db);
        return NULL;
    }
    probe->db = db;
    probe->statement = statement;
    return probe;
}

int cordon_sqlite_probe_version(cordon_sqlite_probe *probe, int64_t *version) {
    int result = sqlite3_step(probe->statement);
    int ok = result == SQLITE_ROW;
    if (ok) *version = sqlite3_column_int64(probe->statement, 0);
    sqlite3_reset(probe->statement);
    return ok ? 0 : -1;
}

void cordon_sqlite_probe_close(cordon_sqlite_probe *probe) {
    if (probe == NULL) return;
    sqlite3_finalize(probe->statement);
    sqlite3_close_v2(probe->db);
    free(probe);
}
