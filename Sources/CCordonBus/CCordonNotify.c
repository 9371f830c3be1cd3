#include "CCordonNotify.h"
#include <errno.h>
#include <string.h>

#define NOTIFICATIONS "org.freedesktop.Notifications"
#define NOTIFICATIONS_PATH "/org/freedesktop/Notifications"

int cordon_notify_show(sd_bus *bus, const char *app_name, const char *summary, const char *body, int32_t expire_ms,
                       uint32_t *id, char *error_name, size_t error_length) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    // Notify(app_name s, replaces_id u, app_icon s, summary s, body s, actions as, hints a{sv},
    // expire_timeout i) -> id u; one hint: urgency 2 (critical), so the code stays on screen.
    int r = sd_bus_call_method(bus, NOTIFICATIONS, NOTIFICATIONS_PATH, NOTIFICATIONS, "Notify", &error, &reply,
                               "susssasa{sv}i", app_name, (uint32_t)0, "dialog-password", summary, body, 0, 1,
                               "urgency", "y", (uint8_t)2, expire_ms);
    if (r < 0 && error.name != NULL && error_name != NULL && error_length > 0) {
        strncpy(error_name, error.name, error_length - 1);
        error_name[error_length - 1] = '\0';
    }
    sd_bus_error_free(&error);
    if (r < 0) return r;
    r = sd_bus_message_read(reply, "u", id);
    sd_bus_message_unref(reply);
    return r < 0 ? r : 0;
}

int cordon_notify_close(sd_bus *bus, uint32_t id) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int r = sd_bus_call_method(bus, NOTIFICATIONS, NOTIFICATIONS_PATH, NOTIFICATIONS, "CloseNotification", &error,
                               NULL, "u", id);
    sd_bus_error_free(&error);
    return r < 0 ? r : 0;
}
