#ifndef CCORDON_AEAD_H
#define CCORDON_AEAD_H

#include <stddef.h>
#include <stdint.h>

/// A ChaCha20-Poly1305 context for one key (BoringSSL's EVP_AEAD_CTX, opaque here).
typedef struct cordon_aead cordon_aead;

/// A context for the 32-byte `key` with 16-byte tags, or NULL (allocation failure).
cordon_aead *cordon_chacha20poly1305_new(const void *key, size_t key_len);

/// An AES-256-GCM context for the 32-byte `key` with 16-byte tags, or NULL (allocation failure).
cordon_aead *cordon_aes256gcm_new(const void *key, size_t key_len);

/// Opens as `cordon_aead_open` does, authenticating `ad_len` bytes of associated data `ad` too.
long cordon_aead_open_ad(const cordon_aead *aead, const void *nonce, const void *in, size_t in_len, const void *ad,
                         size_t ad_len, void *out, size_t out_capacity);

/// Frees the context; BoringSSL zeroes its key state as it frees it.
void cordon_aead_free(cordon_aead *aead);

/// Seals `in_len` bytes of `in` under the 12-byte `nonce` into `out`, which has room for
/// `in_len + 16` bytes (the ciphertext, then the tag); `out` may be `in`. Returns the bytes
/// written, or -1.
long cordon_aead_seal(const cordon_aead *aead, const void *nonce, const void *in, size_t in_len, void *out,
                      size_t out_capacity);

/// Opens `in_len` bytes (ciphertext, then the 16-byte tag) under the 12-byte `nonce` into `out`,
/// which has room for `in_len - 16` bytes; `out` may be `in`. Returns the plaintext's length, or
/// -1 when the bytes do not authenticate.
long cordon_aead_open(const cordon_aead *aead, const void *nonce, const void *in, size_t in_len, void *out,
                      size_t out_capacity);

#endif
