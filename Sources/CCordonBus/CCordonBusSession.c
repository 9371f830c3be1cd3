#define _GNU_SOURCE
#include "CCordonBus.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LOGIN1 "org.freedesktop.login1"
#define LOGIN1_PATH "/org/freedesktop/login1"
#define LOGIN1_MANAGER "org.freedesktop.login1.Manager"

static int copy_out(const char *value, char *out, size_t length) {
    if (strlen(value) >= length) return -ENAMETOOLONG;
    strcpy(out, value);
    return 0;
}

/// The object path of the user's display session (User.Display), or -ENXIO when there is none.
static int user_display_session(sd_bus *bus, uint32_t uid, char *path, size_t length) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    int r = sd_bus_call_method(bus, LOGIN1, LOGIN1_PATH, LOGIN1_MANAGER, "GetUser", &error, &reply, "u", uid);
    sd_bus_error_free(&error);
    if (r < 0) return r;
    const char *user = NULL;
    r = sd_bus_message_read(reply, "o", &user);
    char user_path[512];
    if (r >= 0) r = copy_out(user, user_path, sizeof user_path);
    sd_bus_message_unref(reply);
    if (r < 0) return r;
    reply = NULL;
    r = sd_bus_get_property(bus, LOGIN1, user_path, "org.freedesktop.login1.User", "Display", &error, &reply, "(so)");
    sd_bus_error_free(&error);
    if (r < 0) return r;
    const char *id = NULL;
    const char *object = NULL;
    r = sd_bus_message_read(reply, "(so)", &id, &object);
    if (r >= 0) r = strcmp(object, "/") == 0 ? -ENXIO : copy_out(object, path, length);
    sd_bus_message_unref(reply);
    return r;
}

int cordon_bus_prompt_session_path(sd_bus *bus, const char *session_id, uint32_t uid, char *path, size_t length) {
    int r = cordon_bus_get_session_path(bus, session_id, path, length);
    if (r >= 0 || (session_id != NULL && session_id[0] != '\0')) return r;
    return user_display_session(bus, uid, path, length);
}

int cordon_bus_session_string(sd_bus *bus, const char *path, const char *property, char *value, size_t length) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    char *text = NULL;
    int r = sd_bus_get_property_string(
        bus, LOGIN1, path, "org.freedesktop.login1.Session", property, &error, &text);
    sd_bus_error_free(&error);
    if (r < 0) return r;
    r = copy_out(text, value, length);
    free(text);
    return r;
}

int cordon_bus_set_call_timeout_ms(sd_bus *bus, uint32_t milliseconds) {
    return sd_bus_set_method_call_timeout(bus, (uint64_t)milliseconds * 1000ULL);
}
