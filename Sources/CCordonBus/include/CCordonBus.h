#pragma once
#include <stdint.h>
#include <systemd/sd-bus.h>

/// What a watched signal or property change was (see cordon_bus_watch_*).
enum cordon_bus_trigger_kind {
    CORDON_BUS_SESSION_LOCK = 1,
    CORDON_BUS_LOCKED_HINT = 2,
    CORDON_BUS_IDLE_HINT = 3,
    CORDON_BUS_PREPARE_FOR_SLEEP = 4,
    CORDON_BUS_SCREENSAVER_ACTIVE = 5,
    CORDON_BUS_GNOME_SCREENSAVER_ACTIVE = 6,
    /// A logind signal dropped: its sender's connection is not root's (`value`: the uid, or -1
    /// when the bus could not say).
    CORDON_BUS_UNTRUSTED_SENDER = 7,
};


/// Called on the thread that runs sd_bus_process: `kind` (a cordon_bus_trigger_kind) and its
/// boolean value (1 for a plain signal such as Session.Lock).
typedef void (*cordon_bus_trigger_fn)(int kind, int value, void *userdata);

/// Connects to `address` when it is non-empty, else to the system's own bus
/// (`unix:path=/run/dbus/system_bus_socket`, whatever DBUS_SYSTEM_BUS_ADDRESS says; `user` 0) or
/// the user bus, and waits for the bus's Hello. Returns 0 or -errno.
int cordon_bus_open(const char *address, int user, sd_bus **out);
/// The unique name that owns `name` on `bus` (GetNameOwner) into `owner`, and the uid of that
/// connection as the bus daemon saw it connect (GetConnectionUnixUser) into `uid`. Returns 0,
/// -ENXIO when nobody owns the name, or -errno; the D-Bus error name goes to `error_name`.
int cordon_bus_name_owner(sd_bus *bus, const char *name, char *owner, size_t length, uint32_t *uid,
                          char *error_name, size_t error_length);
/// The uid of the connection `unique` on `bus` (GetConnectionUnixUser). Returns 0 or -errno.
int cordon_bus_connection_uid(sd_bus *bus, const char *unique, uint32_t *uid);
/// The object path of the logind session: `session_id` when non-empty (Manager.GetSession),
/// else the session of this process (Manager.GetSessionByPID(getpid())). Returns 0 or -errno.
int cordon_bus_get_session_path(sd_bus *bus, const char *session_id, char *path, size_t length);
/// Takes a logind inhibitor (Manager.Inhibit). Returns the lock's fd (close-on-exec) or -errno.
int cordon_bus_inhibit(sd_bus *bus, const char *what, const char *who, const char *why, const char *mode);
/// Reads one boolean from the message. Returns 1, 0 or -errno.
int cordon_bus_read_bool(sd_bus_message *message);
/// Finds a boolean property in a PropertiesChanged message. Returns 1, 0, -ENOENT when absent, or -errno.
int cordon_bus_changed_bool(sd_bus_message *message, const char *property);
/// Watches logind: the session's Lock signal and LockedHint/IdleHint changes, and
/// Manager.PrepareForSleep (only that when `session_path` is NULL). A signal is taken only from a
/// connection the bus says is root's; any other sender's is dropped and reported as
/// CORDON_BUS_UNTRUSTED_SENDER (value: its uid, or -1). Returns 0 or -errno.
int cordon_bus_watch_logind(sd_bus *bus, const char *session_path, cordon_bus_trigger_fn fn, void *userdata);
/// Watches org.freedesktop.ScreenSaver and org.gnome.ScreenSaver ActiveChanged. Returns 0 or -errno.
int cordon_bus_watch_screensaver(sd_bus *bus, cordon_bus_trigger_fn fn, void *userdata);
/// The logind session an implicit-unlock prompt is shown in: `session_id` when non-empty, else this
/// process's session, else the user's display session (Manager.GetUser(uid), User.Display).
/// Returns 0, -ENXIO when the user has no display session, or -errno.
int cordon_bus_prompt_session_path(sd_bus *bus, const char *session_id, uint32_t uid, char *path, size_t length);
/// Reads the string property `property` of the logind session at `path` (Display, TTY, Type).
/// Returns 0 or -errno.
int cordon_bus_session_string(sd_bus *bus, const char *path, const char *property, char *value, size_t length);
/// Bounds every method call on `bus` (sd_bus_set_method_call_timeout). Returns 0 or -errno.
int cordon_bus_set_call_timeout_ms(sd_bus *bus, uint32_t milliseconds);
/// Milliseconds until sd-bus needs processing for a timeout, or -1 for none.
int cordon_bus_timeout_ms(sd_bus *bus);
#include "CCordonFprint.h"
#include "CCordonNotify.h"
