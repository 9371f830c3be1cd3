#ifndef CCORDON_TPM_H
#define CCORDON_TPM_H

#include <stddef.h>
#include <stdint.h>

// Fixed-signature C glue over ESYS (docs/ARCHITECTURE.md, "Modules": CCordonTPM). The TPM2B and
// TPMT structures are nested unions and fixed arrays; building them here keeps them out of Swift.
// Every function returns a TSS2_RC (0 on success). Secrets pass through caller buffers only, and
// every ESYS-allocated copy is zeroed before it is freed.

typedef struct cordon_tpm cordon_tpm;

/// The largest marshalled TPM2B_PUBLIC and TPM2B_PRIVATE this glue produces or accepts.
#define CORDON_TPM_BLOB_MAX 1024
/// The largest sealed secret and authorization value.
#define CORDON_TPM_SECRET_MAX 64

/// The dictionary-attack state (TPM2_GetCapability, TPM_PT_PERMANENT and TPM_PT_LOCKOUT_*).
typedef struct {
    uint32_t lockout_counter;
    uint32_t max_auth_fail;
    uint32_t lockout_interval;
    uint32_t lockout_recovery;
    int in_lockout;
} cordon_tpm_da_state;

/// Opens a TCTI from `configuration` ("device:/dev/tpmrm0", "swtpm:host=127.0.0.1,port=2321") and an
/// ESYS context on it, and starts the TPM if the TCTI reaches an unstarted one.
uint32_t cordon_tpm_open(const char *configuration, cordon_tpm **out);
/// Closes the contexts (flushing nothing left: every function flushes what it loads).
void cordon_tpm_close(cordon_tpm *tpm);

/// Seals `secret` in a keyed-hash object under the owner hierarchy's ECC P-256 storage primary (the
/// standard SRK template): authValue `auth`, policy PolicyPCR(SHA-256 bank, `pcrs`, current values,
/// when `pcr_count` > 0) then PolicyAuthValue; noDA clear, so every wrong authValue counts against
/// the TPM's lockout. Writes the marshalled TPM2B_PUBLIC and TPM2B_PRIVATE.
uint32_t cordon_tpm_seal(
    cordon_tpm *tpm, const uint8_t *auth, size_t auth_len, const uint8_t *secret, size_t secret_len,
    const uint32_t *pcrs, size_t pcr_count, uint8_t *public_out, size_t *public_len, uint8_t *private_out,
    size_t *private_len);

/// Where an unseal failed: reading the blobs, the primary, loading the object (a TPM cleared or
/// replaced refuses it here), the policy session, or the unseal itself (authValue, PCRs, lockout).
typedef enum {
    CORDON_TPM_STAGE_BLOBS = 1,
    CORDON_TPM_STAGE_PRIMARY = 2,
    CORDON_TPM_STAGE_LOAD = 3,
    CORDON_TPM_STAGE_SESSION = 4,
    CORDON_TPM_STAGE_UNSEAL = 5,
} cordon_tpm_stage;

/// Loads the object and unseals it through a salted policy session (PolicyPCR over `pcrs` when any,
/// then PolicyAuthValue with `auth`), the response encrypted. Writes the secret to `secret_out`
/// (CORDON_TPM_SECRET_MAX bytes) and, on failure, the stage that failed to `stage`.
uint32_t cordon_tpm_unseal(
    cordon_tpm *tpm, const uint8_t *auth, size_t auth_len, const uint8_t *public_blob, size_t public_len,
    const uint8_t *private_blob, size_t private_len, const uint32_t *pcrs, size_t pcr_count, uint8_t *secret_out,
    size_t *secret_len, int *stage);

/// Reads the dictionary-attack state.
uint32_t cordon_tpm_da_state_read(cordon_tpm *tpm, cordon_tpm_da_state *out);

/// Reads PCR `index` of the SHA-256 bank (32 bytes).
uint32_t cordon_tpm_pcr_read(cordon_tpm *tpm, uint32_t index, uint8_t digest_out[32]);

/// Loads the sealed object under the primary and flushes it, without its authValue: whether this TPM
/// still holds the seed that sealed it (a TPM cleared or replaced refuses it). Nothing is counted
/// against the dictionary-attack lockout.
uint32_t cordon_tpm_load_check(
    cordon_tpm *tpm, const uint8_t *public_blob, size_t public_len, const uint8_t *private_blob,
    size_t private_len);

/// Defines an NV counter index `index` (owner hierarchy, empty owner authorization): TPM_NT_COUNTER,
/// authValue `auth` for reads and increments, NO_DA (the authValue is random, never guessed), and
/// increments it once so that it reads. TPM_RC_NV_DEFINED when `index` is taken: pick another.
uint32_t cordon_tpm_nv_counter_define(cordon_tpm *tpm, uint32_t index, const uint8_t *auth, size_t auth_len);

/// Increments the NV counter `index` by one (TPM2_NV_Increment with `auth`): it never goes back.
uint32_t cordon_tpm_nv_counter_increment(cordon_tpm *tpm, uint32_t index, const uint8_t *auth, size_t auth_len);

/// Reads the NV counter `index` (TPM2_NV_Read with `auth`, 8 bytes, big-endian).
uint32_t cordon_tpm_nv_counter_read(
    cordon_tpm *tpm, uint32_t index, const uint8_t *auth, size_t auth_len, uint64_t *value_out);

/// Removes the NV index `index` (owner authorization): tests and a container that never finished
/// initializing only; a wipe keeps its counter, so copies from before it stay refused.
uint32_t cordon_tpm_nv_undefine(cordon_tpm *tpm, uint32_t index);

/// Whether the sealed object's policy holds now: computes in a trial session the digest of the
/// policy the seal uses (PolicyPCR over `pcrs` with their CURRENT values, when any, then
/// PolicyAuthValue) and compares it with the authPolicy of the marshalled TPM2B_PUBLIC. Writes 1
/// to `matches` when they are equal (the bound PCRs hold the values sealed), 0 otherwise. Loads
/// nothing and needs no authorization: nothing is counted against the dictionary-attack lockout.
uint32_t cordon_tpm_policy_check(
    cordon_tpm *tpm, const uint8_t *public_blob, size_t public_len, const uint32_t *pcrs, size_t pcr_count,
    int *matches);

/// A description of `rc` from the TSS (static storage).
const char *cordon_tpm_rc_text(uint32_t rc);

#endif
