#pragma once
#include <stdint.h>
#include <stddef.h>
#include <systemd/sd-bus.h>

/// org.freedesktop.Notifications.Notify on `bus`: shows `summary` and `body` as `app_name` for
/// `expire_ms` (-1: the server's default). Writes the notification's id to `id`. Returns 0 or
/// -errno; on a D-Bus error its name goes to `error_name`.
int cordon_notify_show(sd_bus *bus, const char *app_name, const char *summary, const char *body, int32_t expire_ms,
                       uint32_t *id, char *error_name, size_t error_length);
/// org.freedesktop.Notifications.CloseNotification(id). Returns 0 or -errno.
int cordon_notify_close(sd_bus *bus, uint32_t id);
