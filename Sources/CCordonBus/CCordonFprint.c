#include "CCordonFprint.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define FPRINT_DEVICE "net.reactivated.Fprint.Device"

static void copy_error(const sd_bus_error *error, char *name, size_t length) {
    if (name == NULL || length == 0) return;
    snprintf(name, length, "%s", (error != NULL && error->name != NULL) ? error->name : "");
}

static int device_call(sd_bus *bus, const char *owner, const char *device, const char *member,
                       const char *argument, char *error_name, size_t error_length) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int r;
    if (argument != NULL) {
        r = sd_bus_call_method(bus, owner, device, FPRINT_DEVICE, member, &error, NULL, "s", argument);
    } else {
        r = sd_bus_call_method(bus, owner, device, FPRINT_DEVICE, member, &error, NULL, "");
    }
    if (r < 0) copy_error(&error, error_name, error_length);
    sd_bus_error_free(&error);
    return r;
}

int cordon_fprint_probe(sd_bus *bus, const char *owner, char *device, size_t length, int *enrolled, char *error_name,
                        size_t error_length) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    const char *path = NULL;
    *enrolled = 0;
    int r = sd_bus_call_method(bus, owner, "/net/reactivated/Fprint/Manager", "net.reactivated.Fprint.Manager",
                               "GetDefaultDevice", &error, &reply, "");
    if (r >= 0) r = sd_bus_message_read(reply, "o", &path);
    if (r >= 0) {
        if (strlen(path) >= length) r = -ENAMETOOLONG;
        else snprintf(device, length, "%s", path);
    }
    sd_bus_message_unref(reply);
    reply = NULL;
    if (r < 0) {
        copy_error(&error, error_name, error_length);
        sd_bus_error_free(&error);
        return r;
    }
    r = sd_bus_call_method(bus, owner, device, FPRINT_DEVICE, "ListEnrolledFingers", &error, &reply, "s", "");
    if (r >= 0) {
        r = sd_bus_message_enter_container(reply, 'a', "s");
        while (r >= 0) {
            const char *finger = NULL;
            r = sd_bus_message_read(reply, "s", &finger);
            if (r <= 0) break;
            *enrolled += 1;
        }
        if (r >= 0) r = 0;
    } else if (sd_bus_error_has_name(&error, "net.reactivated.Fprint.Error.NoEnrolledPrints")) {
        r = 0;
    } else {
        copy_error(&error, error_name, error_length);
    }
    sd_bus_message_unref(reply);
    sd_bus_error_free(&error);
    return r;
}

struct verify_state {
    const char *owner;
    const char *device;
    int done;
    int ignored;
    char *result;
    size_t length;
};

static int on_status(sd_bus_message *message, void *userdata, sd_bus_error *ret_error) {
    (void)ret_error;
    struct verify_state *state = userdata;
    const char *sender = sd_bus_message_get_sender(message);
    const char *path = sd_bus_message_get_path(message);
    // Only the unique name that owns net.reactivated.Fprint speaks for the reader: a signal with
    // the same interface and member from anyone else (a same-user process can connect to the
    // system bus and emit it) is dropped and counted.
    if (sender == NULL || strcmp(sender, state->owner) != 0 || path == NULL || strcmp(path, state->device) != 0) {
        state->ignored += 1;
        return 0;
    }
    const char *result = NULL;
    int done = 0;
    if (sd_bus_message_read(message, "sb", &result, &done) < 0) return 0;
    snprintf(state->result, state->length, "%s", result);
    if (done) state->done = 1;
    return 0;
}

static uint64_t now_usec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int cordon_fprint_verify(sd_bus *bus, const char *owner, const char *device, uint64_t timeout_usec, char *result,
                         size_t length, int *ignored, char *error_name, size_t error_length) {
    sd_bus_slot *slot = NULL;
    int r, claimed = 0, started = 0;
    *ignored = 0;
    if (length > 0) result[0] = '\0';
    struct verify_state state = {
        .owner = owner, .device = device, .done = 0, .ignored = 0, .result = result, .length = length};
    // No sender in the rule: the check is ours (on_status), so a forged signal is seen and refused.
    r = sd_bus_match_signal(bus, &slot, NULL, NULL, FPRINT_DEVICE, "VerifyStatus", on_status, &state);
    if (r >= 0) {
        r = device_call(bus, owner, device, "Claim", "", error_name, error_length);
        claimed = r >= 0;
    }
    if (r >= 0) {
        r = device_call(bus, owner, device, "VerifyStart", "any", error_name, error_length);
        started = r >= 0;
    }
    uint64_t deadline = now_usec() + timeout_usec;
    while (r >= 0 && !state.done) {
        r = sd_bus_process(bus, NULL);
        if (r < 0 || state.done) break;
        if (r > 0) continue;
        uint64_t now = now_usec();
        if (now >= deadline) {
            r = -ETIMEDOUT;
            break;
        }
        r = sd_bus_wait(bus, deadline - now);
    }
    *ignored = state.ignored;
    if (started) device_call(bus, owner, device, "VerifyStop", NULL, NULL, 0);
    if (claimed) device_call(bus, owner, device, "Release", NULL, NULL, 0);
    sd_bus_slot_unref(slot);
    if (r < 0) return r;
    return strcmp(result, "verify-match") == 0 ? CORDON_FPRINT_MATCH : CORDON_FPRINT_NO_MATCH;
}
