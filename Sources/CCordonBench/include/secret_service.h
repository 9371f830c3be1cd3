#pragma once
#include <stddef.h>
#include <stdint.h>

// A Secret Service client (org.freedesktop.Secret.*) on sd-bus, the peer `cordon-bench rtt`
// measures Storage.Get against (docs/PERFORMANCE.md, "Secret Service peers"). One long-lived
// connection to a bus address, two sessions opened once: "plain" (the secret in the clear) and
// "dh-ietf1024-sha256-aes128-cbc-pkcs7" (1024-bit MODP group 2 Diffie-Hellman, HKDF-SHA256 to an
// AES-128 key, AES-128-CBC with PKCS#7 padding), the one libsecret uses. Every function returns
// 0 or -errno; a secret that does not equal the expected bytes is -EBADMSG.

typedef struct ccb_secret_client ccb_secret_client;

/// Connects to the bus at `address` and opens both sessions with the service named `service`
/// (normally "org.freedesktop.secrets"). `error` (may be NULL) receives a message on failure.
int ccb_secret_open(const char *address, const char *service, ccb_secret_client **out, char *error, size_t capacity);
/// Stores `value` (content type "application/octet-stream") with the one attribute
/// `key`=`attribute` and label `label` in the collection of alias "default" (or `collection`
/// when it is not NULL), replacing an item with the same attributes, over the plain session.
/// Writes the item's object path into `item_path`.
int ccb_secret_store(ccb_secret_client *client, const char *collection, const char *label, const char *key,
                     const char *attribute, const uint8_t *value, size_t length, char *item_path, size_t capacity,
                     char *error, size_t error_capacity);
/// org.freedesktop.Secret.Item.GetSecret on `item_path` over the plain session; the secret must
/// equal `expected`.
int ccb_secret_get_by_path(ccb_secret_client *client, const char *item_path, const uint8_t *expected, size_t length);
/// What libsecret's secret_password_lookup_sync sends: Service.SearchItems with the attribute,
/// then Service.GetSecrets of the first unlocked item over the encrypted session; the decrypted
/// secret must equal `expected`.
int ccb_secret_lookup(ccb_secret_client *client, const char *key, const char *attribute, const uint8_t *expected,
                      size_t length);
/// Service.SearchItems with the one attribute `key`=`attribute`: the first unlocked item's
/// path into `item_path` (-ENOENT when there is none).
int ccb_secret_search(ccb_secret_client *client, const char *key, const char *attribute, char *item_path,
                      size_t capacity);
/// The pid of the process owning the service's name, or -errno.
int32_t ccb_secret_service_pid(ccb_secret_client *client);
/// The last error's message (the D-Bus error of the last failed call), or "".
const char *ccb_secret_last_error(ccb_secret_client *client);
void ccb_secret_close(ccb_secret_client *client);
