#pragma once
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

/// What cordon_fprint_verify ended with.
enum cordon_fprint_outcome {
    CORDON_FPRINT_MATCH = 1,
    CORDON_FPRINT_NO_MATCH = 0,
};

/// fprintd's default device (Manager.GetDefaultDevice) into `device`, and how many fingers the
/// calling user has enrolled on it (Device.ListEnrolledFingers("")), into `enrolled`, asked of
/// `owner`, the unique name that owns net.reactivated.Fprint (cordon_bus_name_owner: the caller
/// has checked whose connection it is). A missing device or no enrolled finger is not an error:
/// `enrolled` is 0 then. Returns 0 or -errno; the D-Bus error name, if any, goes into `error_name`.
int cordon_fprint_probe(sd_bus *bus, const char *owner, char *device, size_t length, int *enrolled,
                        char *error_name, size_t error_length);

/// Claims `device` of `owner` (the unique name that owns net.reactivated.Fprint, checked by the
/// caller), runs VerifyStart("any") and waits up to `timeout_usec` for a final VerifyStatus
/// (done=true) whose sender is `owner`, then VerifyStop and Release. Signals from any other
/// sender are counted in `ignored` and otherwise dropped. The final status string (verify-match,
/// verify-no-match, verify-disconnected, ...) goes into `result`. Returns CORDON_FPRINT_MATCH,
/// CORDON_FPRINT_NO_MATCH or -errno (-ETIMEDOUT when no final status came in time); the D-Bus
/// error name goes into `error_name`.
int cordon_fprint_verify(sd_bus *bus, const char *owner, const char *device, uint64_t timeout_usec, char *result,
                         size_t length, int *ignored, char *error_name, size_t error_length);
