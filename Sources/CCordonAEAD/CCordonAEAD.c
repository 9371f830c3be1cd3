// ChaCha20-Poly1305 sealing into the caller's buffer (docs/ARCHITECTURE.md, "Modules", CordonAge),
// and AES-256-GCM opening into it (RecordSealer's reads: no SealedBox, no Data per record).
//
// swift-crypto's `ChaChaPoly.seal` returns a `SealedBox` it assembles by appending the nonce, the
// ciphertext and the tag into a new buffer: one more copy of every 64 KiB chunk, about as much CPU
// as the cipher itself (docs/PERFORMANCE.md). Its package links BoringSSL into every binary that
// uses it but does not export the C target, so the few stable BoringSSL AEAD entry points used
// here are declared by hand, opaque types only: no structure layout is assumed. The cipher is
// BoringSSL's, the same code swift-crypto runs; nothing cryptographic is written here. A rename on
// swift-crypto's side fails the link, never the output (the CCTV vectors and the age CLI interop
// tests check what these functions produce).
#include "CCordonAEAD.h"

typedef struct evp_aead_st EVP_AEAD;
typedef struct evp_aead_ctx_st EVP_AEAD_CTX;

extern const EVP_AEAD *CCryptoBoringSSL_EVP_aead_chacha20_poly1305(void);
extern const EVP_AEAD *CCryptoBoringSSL_EVP_aead_aes_256_gcm(void);
extern EVP_AEAD_CTX *CCryptoBoringSSL_EVP_AEAD_CTX_new(const EVP_AEAD *aead, const uint8_t *key, size_t key_len,
                                                       size_t tag_len);
extern void CCryptoBoringSSL_EVP_AEAD_CTX_free(EVP_AEAD_CTX *ctx);
extern int CCryptoBoringSSL_EVP_AEAD_CTX_seal(const EVP_AEAD_CTX *ctx, uint8_t *out, size_t *out_len,
                                              size_t max_out_len, const uint8_t *nonce, size_t nonce_len,
                                              const uint8_t *in, size_t in_len, const uint8_t *ad, size_t ad_len);
extern int CCryptoBoringSSL_EVP_AEAD_CTX_open(const EVP_AEAD_CTX *ctx, uint8_t *out, size_t *out_len,
                                              size_t max_out_len, const uint8_t *nonce, size_t nonce_len,
                                              const uint8_t *in, size_t in_len, const uint8_t *ad, size_t ad_len);

enum { kTagLength = 16, kNonceLength = 12 };

cordon_aead *cordon_chacha20poly1305_new(const void *key, size_t key_len) {
    return (cordon_aead *)CCryptoBoringSSL_EVP_AEAD_CTX_new(CCryptoBoringSSL_EVP_aead_chacha20_poly1305(), key,
                                                            key_len, kTagLength);
}

cordon_aead *cordon_aes256gcm_new(const void *key, size_t key_len) {
    return (cordon_aead *)CCryptoBoringSSL_EVP_AEAD_CTX_new(CCryptoBoringSSL_EVP_aead_aes_256_gcm(), key, key_len,
                                                            kTagLength);
}

long cordon_aead_open_ad(const cordon_aead *aead, const void *nonce, const void *in, size_t in_len, const void *ad,
                         size_t ad_len, void *out, size_t out_capacity) {
    size_t written = 0;
    if (!CCryptoBoringSSL_EVP_AEAD_CTX_open((const EVP_AEAD_CTX *)aead, out, &written, out_capacity, nonce,
                                            kNonceLength, in, in_len, ad, ad_len)) {
        return -1;
    }
    return (long)written;
}

void cordon_aead_free(cordon_aead *aead) {
    if (aead != NULL) CCryptoBoringSSL_EVP_AEAD_CTX_free((EVP_AEAD_CTX *)aead);
}

long cordon_aead_seal(const cordon_aead *aead, const void *nonce, const void *in, size_t in_len, void *out,
                      size_t out_capacity) {
    size_t written = 0;
    if (!CCryptoBoringSSL_EVP_AEAD_CTX_seal((const EVP_AEAD_CTX *)aead, out, &written, out_capacity, nonce,
                                            kNonceLength, in, in_len, NULL, 0)) {
        return -1;
    }
    return (long)written;
}

long cordon_aead_open(const cordon_aead *aead, const void *nonce, const void *in, size_t in_len, void *out,
                      size_t out_capacity) {
    size_t written = 0;
    if (!CCryptoBoringSSL_EVP_AEAD_CTX_open((const EVP_AEAD_CTX *)aead, out, &written, out_capacity, nonce,
                                            kNonceLength, in, in_len, NULL, 0)) {
        return -1;
    }
    return (long)written;
}
