#define _GNU_SOURCE
#include "secret_service.h"
#include <errno.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

// The Secret Service peer of `cordon-bench rtt` (docs/PERFORMANCE.md, "Secret Service peers"):
// the calls a C application makes, on one connection kept open, with the two sessions opened
// once as libsecret keeps its session for the life of the process.

#define SERVICE_PATH "/org/freedesktop/secrets"
#define SERVICE_INTERFACE "org.freedesktop.Secret.Service"
#define ITEM_INTERFACE "org.freedesktop.Secret.Item"
#define COLLECTION_INTERFACE "org.freedesktop.Secret.Collection"
#define DH_ALGORITHM "dh-ietf1024-sha256-aes128-cbc-pkcs7"
#define DH_BYTES 128  // The 1024-bit group's prime: every public value and the shared secret.

struct ccb_secret_client {
    sd_bus *bus;
    char *service;
    char *plain_session;
    char *dh_session;
    uint8_t key[16];           // The encrypted session's AES-128 key.
    EVP_CIPHER_CTX *cipher;    // Reused for every decryption.
    uint8_t *decrypted;        // Reused output buffer.
    size_t decrypted_capacity;
    char error[512];
};

static int fail(ccb_secret_client *client, int rc, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(client->error, sizeof(client->error), format, arguments);
    va_end(arguments);
    return rc < 0 ? rc : -EPROTO;
}

static int bus_fail(ccb_secret_client *client, int rc, const char *what, const sd_bus_error *error) {
    return fail(client, rc, "%s: %s", what,
                sd_bus_error_is_set(error) ? error->message ? error->message : error->name : strerror(-rc));
}

// OpenSession("plain", "" as a string variant).
static int open_plain(ccb_secret_client *client) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    int rc = sd_bus_call_method(client->bus, client->service, SERVICE_PATH, SERVICE_INTERFACE, "OpenSession", &error,
                                &reply, "sv", "plain", "s", "");
    if (rc < 0) {
        rc = bus_fail(client, rc, "OpenSession plain", &error);
        sd_bus_error_free(&error);
        return rc;
    }
    const char *path = NULL;
    rc = sd_bus_message_skip(reply, "v");
    if (rc >= 0) rc = sd_bus_message_read(reply, "o", &path);
    if (rc >= 0) client->plain_session = strdup(path);
    sd_bus_message_unref(reply);
    return rc < 0 ? fail(client, rc, "OpenSession plain: reply") : 0;
}

// HKDF-SHA256 (RFC 5869) with no salt (a hash-length of zeros) and no info, to 16 bytes: what
// libsecret and gnome-keyring derive the session key with (egg_hkdf_perform).
static int hkdf_sha256_16(const uint8_t *ikm, size_t length, uint8_t key[16]) {
    uint8_t salt[32] = {0}, prk[32], block[32];
    unsigned int prk_length = 0, block_length = 0;
    if (HMAC(EVP_sha256(), salt, sizeof(salt), ikm, length, prk, &prk_length) == NULL) return -EIO;
    const uint8_t counter = 1;
    if (HMAC(EVP_sha256(), prk, prk_length, &counter, 1, block, &block_length) == NULL) return -EIO;
    memcpy(key, block, 16);
    return 0;
}

// OpenSession(DH_ALGORITHM, our public value as an "ay" variant) -> (the service's public value,
// the session); the shared secret g^xy mod p, padded to the prime's length, gives the key.
static int open_dh(ccb_secret_client *client) {
    int rc = -ENOMEM;
    BN_CTX *context = BN_CTX_new();
    BIGNUM *prime = BN_get_rfc2409_prime_1024(NULL), *generator = BN_new(), *private_key = BN_new(),
           *public_key = BN_new(), *peer = NULL, *shared = BN_new();
    sd_bus_message *call = NULL, *reply = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    if (context == NULL || prime == NULL || generator == NULL || private_key == NULL || public_key == NULL ||
        shared == NULL)
        goto done;
    if (!BN_set_word(generator, 2) || !BN_rand(private_key, 1023, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) ||
        !BN_mod_exp(public_key, generator, private_key, prime, context)) {
        rc = fail(client, -EIO, "Diffie-Hellman: key generation failed");
        goto done;
    }
    uint8_t ours[DH_BYTES];
    int ours_length = BN_bn2bin(public_key, ours);
    rc = sd_bus_message_new_method_call(client->bus, &call, client->service, SERVICE_PATH, SERVICE_INTERFACE,
                                        "OpenSession");
    if (rc >= 0) rc = sd_bus_message_append(call, "s", DH_ALGORITHM);
    if (rc >= 0) rc = sd_bus_message_open_container(call, 'v', "ay");
    if (rc >= 0) rc = sd_bus_message_append_array(call, 'y', ours, (size_t)ours_length);
    if (rc >= 0) rc = sd_bus_message_close_container(call);
    if (rc < 0) {
        rc = fail(client, rc, "OpenSession %s: building the call", DH_ALGORITHM);
        goto done;
    }
    rc = sd_bus_call(client->bus, call, 0, &error, &reply);
    if (rc < 0) {
        rc = bus_fail(client, rc, "OpenSession " DH_ALGORITHM, &error);
        goto done;
    }
    const void *theirs = NULL;
    size_t theirs_length = 0;
    const char *path = NULL;
    rc = sd_bus_message_enter_container(reply, 'v', "ay");
    if (rc >= 0) rc = sd_bus_message_read_array(reply, 'y', &theirs, &theirs_length);
    if (rc >= 0) rc = sd_bus_message_exit_container(reply);
    if (rc >= 0) rc = sd_bus_message_read(reply, "o", &path);
    if (rc < 0) {
        rc = fail(client, rc, "OpenSession %s: reply", DH_ALGORITHM);
        goto done;
    }
    peer = BN_bin2bn(theirs, (int)theirs_length, NULL);
    uint8_t secret[DH_BYTES];
    if (peer == NULL || !BN_mod_exp(shared, peer, private_key, prime, context) ||
        BN_bn2binpad(shared, secret, sizeof(secret)) != DH_BYTES || hkdf_sha256_16(secret, sizeof(secret), client->key)) {
        rc = fail(client, -EIO, "Diffie-Hellman: deriving the key failed");
        goto done;
    }
    client->dh_session = strdup(path);
    rc = client->dh_session ? 0 : -ENOMEM;
done:
    sd_bus_error_free(&error);
    sd_bus_message_unref(call);
    sd_bus_message_unref(reply);
    BN_free(prime);
    BN_free(generator);
    BN_clear_free(private_key);
    BN_free(public_key);
    BN_free(peer);
    BN_clear_free(shared);
    BN_CTX_free(context);
    return rc;
}

int ccb_secret_open(const char *address, const char *service, ccb_secret_client **out, char *error, size_t capacity) {
    ccb_secret_client *client = calloc(1, sizeof(*client));
    if (client == NULL) return -ENOMEM;
    client->service = strdup(service);
    client->cipher = EVP_CIPHER_CTX_new();
    int rc = client->service && client->cipher ? 0 : -ENOMEM;
    if (rc >= 0) rc = sd_bus_new(&client->bus);
    if (rc >= 0) rc = sd_bus_set_address(client->bus, address);
    if (rc >= 0) rc = sd_bus_set_bus_client(client->bus, 1);
    if (rc >= 0) rc = sd_bus_start(client->bus);
    if (rc < 0) fail(client, rc, "connecting to %s: %s", address, strerror(-rc));
    if (rc >= 0) rc = open_plain(client);
    if (rc >= 0) rc = open_dh(client);
    if (rc < 0) {
        if (error != NULL && capacity > 0) snprintf(error, capacity, "%s", client->error);
        ccb_secret_close(client);
        return rc;
    }
    *out = client;
    return 0;
}

// A "plain" secret (session, parameters, value, content type) as GetSecret answers it.
static int read_secret(sd_bus_message *reply, const void **parameters, size_t *parameters_length,
                       const void **value, size_t *value_length) {
    const char *session = NULL, *content_type = NULL;
    int rc = sd_bus_message_enter_container(reply, 'r', "oayays");
    if (rc >= 0) rc = sd_bus_message_read(reply, "o", &session);
    if (rc >= 0) rc = sd_bus_message_read_array(reply, 'y', parameters, parameters_length);
    if (rc >= 0) rc = sd_bus_message_read_array(reply, 'y', value, value_length);
    if (rc >= 0) rc = sd_bus_message_read(reply, "s", &content_type);
    if (rc >= 0) rc = sd_bus_message_exit_container(reply);
    return rc;
}

int ccb_secret_store(ccb_secret_client *client, const char *collection, const char *label, const char *key,
                     const char *attribute, const uint8_t *value, size_t length, char *item_path, size_t capacity,
                     char *error_text, size_t error_capacity) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *call = NULL, *reply = NULL;
    char *alias_path = NULL;
    int rc = 0;
    if (collection == NULL) {
        rc = sd_bus_call_method(client->bus, client->service, SERVICE_PATH, SERVICE_INTERFACE, "ReadAlias", &error,
                                &reply, "s", "default");
        const char *path = NULL;
        if (rc >= 0) rc = sd_bus_message_read(reply, "o", &path);
        if (rc < 0) {
            rc = bus_fail(client, rc, "ReadAlias default", &error);
            goto done;
        }
        if (strcmp(path, "/") == 0) {
            rc = fail(client, -ENOENT, "no default collection");
            goto done;
        }
        alias_path = strdup(path);
        collection = alias_path;
        reply = sd_bus_message_unref(reply);
    }
    rc = sd_bus_message_new_method_call(client->bus, &call, client->service, collection, COLLECTION_INTERFACE,
                                        "CreateItem");
    // properties a{sv}: Label and Attributes.
    if (rc >= 0) rc = sd_bus_message_open_container(call, 'a', "{sv}");
    if (rc >= 0) rc = sd_bus_message_append(call, "{sv}", ITEM_INTERFACE ".Label", "s", label);
    if (rc >= 0) rc = sd_bus_message_open_container(call, 'e', "sv");
    if (rc >= 0) rc = sd_bus_message_append(call, "s", ITEM_INTERFACE ".Attributes");
    if (rc >= 0) rc = sd_bus_message_open_container(call, 'v', "a{ss}");
    if (rc >= 0) rc = sd_bus_message_append(call, "a{ss}", 1, key, attribute);
    if (rc >= 0) rc = sd_bus_message_close_container(call);
    if (rc >= 0) rc = sd_bus_message_close_container(call);
    if (rc >= 0) rc = sd_bus_message_close_container(call);
    // secret (oayays), over the plain session; replace.
    if (rc >= 0) rc = sd_bus_message_open_container(call, 'r', "oayays");
    if (rc >= 0) rc = sd_bus_message_append(call, "o", client->plain_session);
    if (rc >= 0) rc = sd_bus_message_append_array(call, 'y', "", 0);
    if (rc >= 0) rc = sd_bus_message_append_array(call, 'y', value, length);
    if (rc >= 0) rc = sd_bus_message_append(call, "s", "application/octet-stream");
    if (rc >= 0) rc = sd_bus_message_close_container(call);
    if (rc >= 0) rc = sd_bus_message_append(call, "b", 1);
    if (rc < 0) {
        rc = fail(client, rc, "CreateItem: building the call");
        goto done;
    }
    rc = sd_bus_call(client->bus, call, 0, &error, &reply);
    if (rc < 0) {
        rc = bus_fail(client, rc, "CreateItem", &error);
        goto done;
    }
    const char *item = NULL, *prompt = NULL;
    rc = sd_bus_message_read(reply, "oo", &item, &prompt);
    if (rc < 0) {
        rc = fail(client, rc, "CreateItem: reply");
        goto done;
    }
    if (strcmp(item, "/") == 0) {
        rc = fail(client, -EACCES, "CreateItem needs a prompt (%s): the collection is locked", prompt);
        goto done;
    }
    rc = (size_t)snprintf(item_path, capacity, "%s", item) < capacity ? 0 : fail(client, -ENAMETOOLONG, "item path");
done:
    if (rc < 0 && error_text != NULL && error_capacity > 0) snprintf(error_text, error_capacity, "%s", client->error);
    sd_bus_error_free(&error);
    sd_bus_message_unref(call);
    sd_bus_message_unref(reply);
    free(alias_path);
    return rc;
}

int ccb_secret_get_by_path(ccb_secret_client *client, const char *item_path, const uint8_t *expected,
                           size_t length) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    int rc = sd_bus_call_method(client->bus, client->service, item_path, ITEM_INTERFACE, "GetSecret", &error, &reply,
                                "o", client->plain_session);
    if (rc < 0) {
        rc = bus_fail(client, rc, "GetSecret", &error);
        sd_bus_error_free(&error);
        return rc;
    }
    const void *parameters = NULL, *value = NULL;
    size_t parameters_length = 0, value_length = 0;
    rc = read_secret(reply, &parameters, &parameters_length, &value, &value_length);
    if (rc < 0)
        rc = fail(client, rc, "GetSecret: reply");
    else if (value_length != length || memcmp(value, expected, length) != 0)
        rc = fail(client, -EBADMSG, "GetSecret: the secret (%zu bytes) is not the one stored (%zu bytes)",
                  value_length, length);
    else
        rc = 0;
    sd_bus_message_unref(reply);
    return rc;
}

// AES-128-CBC, PKCS#7 padding, with the session key and the secret's parameters as the IV.
static int decrypt(ccb_secret_client *client, const uint8_t *iv, size_t iv_length, const uint8_t *input,
                   size_t length, size_t *out_length) {
    if (iv_length != 16 || length == 0 || length % 16 != 0) return fail(client, -EBADMSG, "encrypted secret: bad sizes");
    if (client->decrypted_capacity < length) {
        free(client->decrypted);
        client->decrypted = malloc(length);
        client->decrypted_capacity = client->decrypted ? length : 0;
        if (client->decrypted == NULL) return -ENOMEM;
    }
    int first = 0, last = 0;
    if (!EVP_DecryptInit_ex(client->cipher, EVP_aes_128_cbc(), NULL, client->key, iv) ||
        !EVP_DecryptUpdate(client->cipher, client->decrypted, &first, input, (int)length) ||
        !EVP_DecryptFinal_ex(client->cipher, client->decrypted + first, &last))
        return fail(client, -EBADMSG, "encrypted secret: AES-128-CBC decryption failed (wrong key or padding)");
    *out_length = (size_t)first + (size_t)last;
    return 0;
}

// SearchItems(a{ss}) -> the first unlocked item (borrowed from `*reply`, which the caller frees).
static int search_first(ccb_secret_client *client, const char *key, const char *attribute, sd_bus_message **reply,
                        const char **first) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int rc = sd_bus_call_method(client->bus, client->service, SERVICE_PATH, SERVICE_INTERFACE, "SearchItems", &error,
                                reply, "a{ss}", 1, key, attribute);
    if (rc < 0) {
        rc = bus_fail(client, rc, "SearchItems", &error);
        sd_bus_error_free(&error);
        return rc;
    }
    *first = NULL;
    rc = sd_bus_message_enter_container(*reply, 'a', "o");
    if (rc > 0) rc = sd_bus_message_read(*reply, "o", first);
    if (rc < 0) return fail(client, rc, "SearchItems: reply");
    if (rc == 0 || *first == NULL)
        return fail(client, -ENOENT, "SearchItems: no unlocked item with %s=%s", key, attribute);
    return 0;
}

int ccb_secret_search(ccb_secret_client *client, const char *key, const char *attribute, char *item_path,
                      size_t capacity) {
    sd_bus_message *reply = NULL;
    const char *first = NULL;
    int rc = search_first(client, key, attribute, &reply, &first);
    if (rc >= 0 && (size_t)snprintf(item_path, capacity, "%s", first) >= capacity)
        rc = fail(client, -ENAMETOOLONG, "item path");
    sd_bus_message_unref(reply);
    return rc;
}

int ccb_secret_lookup(ccb_secret_client *client, const char *key, const char *attribute, const uint8_t *expected,
                      size_t length) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL, *call = NULL;
    char *item = NULL;
    const char *first = NULL;
    int rc = search_first(client, key, attribute, &reply, &first);
    if (rc < 0) goto done;
    item = strdup(first);
    reply = sd_bus_message_unref(reply);
    rc = sd_bus_message_new_method_call(client->bus, &call, client->service, SERVICE_PATH, SERVICE_INTERFACE,
                                        "GetSecrets");
    if (rc >= 0) rc = sd_bus_message_append(call, "ao", 1, item);
    if (rc >= 0) rc = sd_bus_message_append(call, "o", client->dh_session);
    if (rc >= 0) rc = sd_bus_call(client->bus, call, 0, &error, &reply);
    if (rc < 0) {
        rc = bus_fail(client, rc, "GetSecrets", &error);
        goto done;
    }
    const char *path = NULL;
    const void *parameters = NULL, *value = NULL;
    size_t parameters_length = 0, value_length = 0;
    rc = sd_bus_message_enter_container(reply, 'a', "{o(oayays)}");
    if (rc > 0) rc = sd_bus_message_enter_container(reply, 'e', "o(oayays)");
    if (rc > 0) rc = sd_bus_message_read(reply, "o", &path);
    if (rc > 0) rc = read_secret(reply, &parameters, &parameters_length, &value, &value_length);
    if (rc <= 0) {
        rc = fail(client, rc < 0 ? rc : -ENOENT, "GetSecrets: no secret in the reply");
        goto done;
    }
    size_t plain_length = 0;
    rc = decrypt(client, parameters, parameters_length, value, value_length, &plain_length);
    if (rc < 0) goto done;
    if (plain_length != length || memcmp(client->decrypted, expected, length) != 0)
        rc = fail(client, -EBADMSG, "GetSecrets: the decrypted secret (%zu bytes) is not the one stored (%zu bytes)",
                  plain_length, length);
done:
    sd_bus_error_free(&error);
    sd_bus_message_unref(call);
    sd_bus_message_unref(reply);
    free(item);
    return rc;
}

int32_t ccb_secret_service_pid(ccb_secret_client *client) {
    sd_bus_creds *credentials = NULL;
    int rc = sd_bus_get_name_creds(client->bus, client->service, SD_BUS_CREDS_PID, &credentials);
    if (rc < 0) return rc;
    pid_t pid = 0;
    rc = sd_bus_creds_get_pid(credentials, &pid);
    sd_bus_creds_unref(credentials);
    return rc < 0 ? rc : pid;
}

const char *ccb_secret_last_error(ccb_secret_client *client) { return client->error; }

void ccb_secret_close(ccb_secret_client *client) {
    if (client == NULL) return;
    if (client->bus != NULL) sd_bus_flush_close_unref(client->bus);
    EVP_CIPHER_CTX_free(client->cipher);
    OPENSSL_cleanse(client->key, sizeof(client->key));
    free(client->decrypted);
    free(client->service);
    free(client->plain_session);
    free(client->dh_session);
    free(client);
}
