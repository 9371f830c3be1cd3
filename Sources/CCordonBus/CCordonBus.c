#define _GNU_SOURCE
#include "CCordonBus.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOGIN1 "org.freedesktop.login1"
#define CORDON_SYSTEM_BUS_ADDRESS "unix:path=/run/dbus/system_bus_socket"
#define LOGIN1_PATH "/org/freedesktop/login1"
#define LOGIN1_MANAGER "org.freedesktop.login1.Manager"

int cordon_bus_open(const char *address, int user, sd_bus **out) {
    sd_bus *bus = NULL;
    int r;
    if (address != NULL && address[0] != '\0') {
        r = sd_bus_new(&bus);
        if (r < 0) return r;
        r = sd_bus_set_address(bus, address);
        if (r >= 0) r = sd_bus_set_bus_client(bus, 1);
        if (r >= 0) r = sd_bus_start(bus);
    } else if (user) {
        r = sd_bus_open_user(&bus);
    } else {
        // The system's own bus, never DBUS_SYSTEM_BUS_ADDRESS (which sd_bus_open_system reads):
        // the system services on it are trusted, so its address is not the environment's to say.
        r = sd_bus_new(&bus);
        if (r < 0) return r;
        r = sd_bus_set_address(bus, CORDON_SYSTEM_BUS_ADDRESS);
        if (r >= 0) r = sd_bus_set_bus_client(bus, 1);
        if (r >= 0) r = sd_bus_set_trusted(bus, 0);
        if (r >= 0) r = sd_bus_start(bus);
    }
    if (r >= 0) {
        const char *unique = NULL;
        r = sd_bus_get_unique_name(bus, &unique);
    }
    if (r < 0) {
        sd_bus_flush_close_unref(bus);
        return r;
    }
    *out = bus;
    return 0;
}

int cordon_bus_connection_uid(sd_bus *bus, const char *unique, uint32_t *uid) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    int r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "GetConnectionUnixUser", &error, &reply, "s", unique);
    sd_bus_error_free(&error);
    if (r >= 0) r = sd_bus_message_read(reply, "u", uid);
    sd_bus_message_unref(reply);
    return r < 0 ? r : 0;
}

int cordon_bus_name_owner(sd_bus *bus, const char *name, char *owner, size_t length, uint32_t *uid,
                          char *error_name, size_t error_length) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    const char *unique = NULL;
    if (error_name != NULL && error_length > 0) error_name[0] = '\0';
    int r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "GetNameOwner", &error, &reply, "s", name);
    if (r < 0 && sd_bus_error_has_name(&error, "org.freedesktop.DBus.Error.NameHasNoOwner")) r = -ENXIO;
    if (r < 0 && error_name != NULL && error_length > 0 && error.name != NULL) {
        snprintf(error_name, error_length, "%s", error.name);
    }
    sd_bus_error_free(&error);
    if (r >= 0) r = sd_bus_message_read(reply, "s", &unique);
    if (r >= 0) {
        if (strlen(unique) >= length) r = -ENAMETOOLONG;
        else snprintf(owner, length, "%s", unique);
    }
    sd_bus_message_unref(reply);
    if (r < 0) return r;
    // Asked of the unique name: a name that changes owner in between answers for no one else.
    return cordon_bus_connection_uid(bus, owner, uid);
}

int cordon_bus_get_session_path(sd_bus *bus, const char *session_id, char *path, size_t length) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    int r;
    if (session_id != NULL && session_id[0] != '\0') {
        r = sd_bus_call_method(
            bus, LOGIN1, LOGIN1_PATH, LOGIN1_MANAGER, "GetSession", &error, &reply, "s", session_id);
    } else {
        r = sd_bus_call_method(
            bus, LOGIN1, LOGIN1_PATH, LOGIN1_MANAGER, "GetSessionByPID", &error, &reply, "u", (uint32_t)getpid());
    }
    sd_bus_error_free(&error);
    if (r < 0) return r;
    const char *object = NULL;
    r = sd_bus_message_read(reply, "o", &object);
    if (r >= 0) {
        if (strlen(object) >= length) {
            r = -ENAMETOOLONG;
        } else {
            strcpy(path, object);
            r = 0;
        }
    }
    sd_bus_message_unref(reply);
    return r;
}

int cordon_bus_inhibit(sd_bus *bus, const char *what, const char *who, const char *why, const char *mode) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    int r = sd_bus_call_method(
        bus, LOGIN1, LOGIN1_PATH, LOGIN1_MANAGER, "Inhibit", &error, &reply, "ssss", what, who, why, mode);
    sd_bus_error_free(&error);
    if (r < 0) return r;
    int fd = -1;
    r = sd_bus_message_read(reply, "h", &fd);
    if (r >= 0) {
        // The message owns its fd: keep a copy that outlives it.
        r = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (r < 0) r = -errno;
    }
    sd_bus_message_unref(reply);
    return r;
}

int cordon_bus_read_bool(sd_bus_message *message) {
    int value = 0;
    int r = sd_bus_message_read(message, "b", &value);
    return r < 0 ? r : value != 0;
}

int cordon_bus_changed_bool(sd_bus_message *message, const char *property) {
    int r = sd_bus_message_rewind(message, 1);
    if (r < 0) return r;
    const char *interface = NULL;
    r = sd_bus_message_read(message, "s", &interface);
    if (r < 0) return r;
    r = sd_bus_message_enter_container(message, 'a', "{sv}");
    if (r < 0) return r;
    while ((r = sd_bus_message_enter_container(message, 'e', "sv")) > 0) {
        const char *name = NULL;
        r = sd_bus_message_read(message, "s", &name);
        if (r < 0) return r;
        if (strcmp(name, property) == 0) {
            r = sd_bus_message_enter_container(message, 'v', "b");
            if (r < 0) return r;
            return cordon_bus_read_bool(message);
        }
        r = sd_bus_message_skip(message, "v");
        if (r < 0) return r;
        r = sd_bus_message_exit_container(message);
        if (r < 0) return r;
    }
    return r < 0 ? r : -ENOENT;
}

/// One watch: the kind it reports and where to.
struct watch {
    int kind;
    /// Whether the sender must be a root connection (logind's signals).
    int root_only;
    /// The last sender found to be root's: asked again only when another sends.
    char trusted[256];
    cordon_bus_trigger_fn fn;
    void *userdata;
};

/// Whether the message comes from a connection the bus says is root's; reports any other sender.
static int sender_is_root(struct watch *watch, sd_bus_message *message) {
    const char *sender = sd_bus_message_get_sender(message);
    if (sender != NULL && watch->trusted[0] != '\0' && strcmp(sender, watch->trusted) == 0) return 1;
    uint32_t uid = 0;
    // A synchronous call from a callback: sd-bus queues whatever else arrives meanwhile.
    int r = sender == NULL ? -ENXIO : cordon_bus_connection_uid(sd_bus_message_get_bus(message), sender, &uid);
    if (r >= 0 && uid == 0 && strlen(sender) < sizeof watch->trusted) {
        snprintf(watch->trusted, sizeof watch->trusted, "%s", sender);
        return 1;
    }
    if (r >= 0 && uid == 0) return 1;
    watch->fn(CORDON_BUS_UNTRUSTED_SENDER, r < 0 ? -1 : (int)uid, watch->userdata);
    return 0;
}

static int on_signal(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    (void)error;
    struct watch *watch = userdata;
    if (watch->root_only && !sender_is_root(watch, message)) return 0;
    int value = 1;
    switch (watch->kind) {
    case CORDON_BUS_SESSION_LOCK:
        break;
    case CORDON_BUS_LOCKED_HINT: {
        value = cordon_bus_changed_bool(message, "LockedHint");
        int idle = cordon_bus_changed_bool(message, "IdleHint");
        if (idle >= 0) watch->fn(CORDON_BUS_IDLE_HINT, idle, watch->userdata);
        break;
    }
    default:
        value = cordon_bus_read_bool(message);
        break;
    }
    if (value >= 0) watch->fn(watch->kind, value, watch->userdata);
    return 0;
}

static int add_watch(
    sd_bus *bus, const char *sender, const char *path, const char *interface, const char *member, int kind,
    cordon_bus_trigger_fn fn, void *userdata) {
    struct watch *watch = malloc(sizeof *watch);
    if (watch == NULL) return -ENOMEM;
    watch->kind = kind;
    // logind is a system service: only a connection of root speaks for it.
    watch->root_only = sender != NULL && strcmp(sender, LOGIN1) == 0;
    watch->trusted[0] = '\0';
    watch->fn = fn;
    watch->userdata = userdata;
    sd_bus_slot *slot = NULL;
    int r = sd_bus_match_signal(bus, &slot, sender, path, interface, member, on_signal, watch);
    if (r < 0) {
        free(watch);
        return r;
    }
    // The slot lives as long as the bus and frees its watch with it.
    sd_bus_slot_set_destroy_callback(slot, free);
    sd_bus_slot_set_floating(slot, 1);
    return 0;
}

int cordon_bus_watch_logind(sd_bus *bus, const char *session_path, cordon_bus_trigger_fn fn, void *userdata) {
    if (session_path == NULL) {
        return add_watch(
            bus, LOGIN1, LOGIN1_PATH, LOGIN1_MANAGER, "PrepareForSleep", CORDON_BUS_PREPARE_FOR_SLEEP, fn, userdata);
    }
    int r = add_watch(
        bus, LOGIN1, session_path, "org.freedesktop.login1.Session", "Lock", CORDON_BUS_SESSION_LOCK, fn, userdata);
    if (r < 0) return r;
    // LockedHint and IdleHint both arrive in PropertiesChanged; one watch reports both.
    r = add_watch(
        bus, LOGIN1, session_path, "org.freedesktop.DBus.Properties", "PropertiesChanged", CORDON_BUS_LOCKED_HINT,
        fn, userdata);
    if (r < 0) return r;
    return add_watch(
        bus, LOGIN1, LOGIN1_PATH, LOGIN1_MANAGER, "PrepareForSleep", CORDON_BUS_PREPARE_FOR_SLEEP, fn, userdata);
}

int cordon_bus_watch_screensaver(sd_bus *bus, cordon_bus_trigger_fn fn, void *userdata) {
    int r = add_watch(
        bus, NULL, NULL, "org.freedesktop.ScreenSaver", "ActiveChanged", CORDON_BUS_SCREENSAVER_ACTIVE, fn, userdata);
    if (r < 0) return r;
    return add_watch(
        bus, NULL, NULL, "org.gnome.ScreenSaver", "ActiveChanged", CORDON_BUS_GNOME_SCREENSAVER_ACTIVE, fn,
        userdata);
}

int cordon_bus_timeout_ms(sd_bus *bus) {
    uint64_t deadline = 0;
    if (sd_bus_get_timeout(bus, &deadline) < 0 || deadline == UINT64_MAX) return -1;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t current = (uint64_t)now.tv_sec * 1000000ULL + (uint64_t)now.tv_nsec / 1000ULL;
    if (deadline <= current) return 0;
    uint64_t ms = (deadline - current + 999) / 1000;
    return ms > 60000 ? 60000 : (int)ms;
}
