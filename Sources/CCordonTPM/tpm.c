// ESYS glue for CordonTPM (docs/ARCHITECTURE.md, "Modules": CCordonTPM). See CCordonTPM.h.
#include "CCordonTPM.h"

#include <stdlib.h>
#include <string.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

struct cordon_tpm {
    TSS2_TCTI_CONTEXT *tcti;
    ESYS_CONTEXT *esys;
};

/// Zeroes `length` bytes in a way the compiler may not drop.
static void wipe(void *pointer, size_t length) {
    if (pointer != NULL) explicit_bzero(pointer, length);
}

uint32_t cordon_tpm_open(const char *configuration, cordon_tpm **out) {
    cordon_tpm *tpm = calloc(1, sizeof *tpm);
    if (tpm == NULL) return TSS2_BASE_RC_MEMORY;
    TSS2_RC rc = Tss2_TctiLdr_Initialize(configuration, &tpm->tcti);
    if (rc != TSS2_RC_SUCCESS) {
        free(tpm);
        return rc;
    }
    rc = Esys_Initialize(&tpm->esys, tpm->tcti, NULL);
    if (rc != TSS2_RC_SUCCESS) {
        Tss2_TctiLdr_Finalize(&tpm->tcti);
        free(tpm);
        return rc;
    }
    *out = tpm;
    return TSS2_RC_SUCCESS;
}

void cordon_tpm_close(cordon_tpm *tpm) {
    if (tpm == NULL) return;
    Esys_Finalize(&tpm->esys);
    Tss2_TctiLdr_Finalize(&tpm->tcti);
    free(tpm);
}

/// The standard storage root key template (TCG EK Credential Profile, "SRK" ECC NIST P-256).
static TPM2B_PUBLIC srk_template(void) {
    TPM2B_PUBLIC template = {0};
    template.publicArea.type = TPM2_ALG_ECC;
    template.publicArea.nameAlg = TPM2_ALG_SHA256;
    template.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT
        | TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA | TPMA_OBJECT_RESTRICTED
        | TPMA_OBJECT_DECRYPT;
    TPMS_ECC_PARMS *ecc = &template.publicArea.parameters.eccDetail;
    ecc->symmetric.algorithm = TPM2_ALG_AES;
    ecc->symmetric.keyBits.aes = 128;
    ecc->symmetric.mode.aes = TPM2_ALG_CFB;
    ecc->scheme.scheme = TPM2_ALG_NULL;
    ecc->curveID = TPM2_ECC_NIST_P256;
    ecc->kdf.scheme = TPM2_ALG_NULL;
    template.publicArea.unique.ecc.x.size = 32;
    template.publicArea.unique.ecc.y.size = 32;
    return template;
}

/// Creates (derives: the same key every time on the same TPM) the storage primary.
static TSS2_RC create_primary(cordon_tpm *tpm, ESYS_TR *primary) {
    TPM2B_SENSITIVE_CREATE sensitive = {0};
    TPM2B_PUBLIC template = srk_template();
    TPM2B_DATA outside = {0};
    TPML_PCR_SELECTION creation = {0};
    return Esys_CreatePrimary(
        tpm->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &template, &outside,
        &creation, primary, NULL, NULL, NULL, NULL);
}

static TPML_PCR_SELECTION pcr_selection(const uint32_t *pcrs, size_t count) {
    TPML_PCR_SELECTION selection = {0};
    selection.count = 1;
    selection.pcrSelections[0].hash = TPM2_ALG_SHA256;
    selection.pcrSelections[0].sizeofSelect = 3;
    for (size_t index = 0; index < count; index++) {
        if (pcrs[index] < 24) selection.pcrSelections[0].pcrSelect[pcrs[index] / 8] |= 1 << (pcrs[index] % 8);
    }
    return selection;
}

/// PolicyPCR over `pcrs` (current values) when any, then PolicyAuthValue.
static TSS2_RC apply_policy(cordon_tpm *tpm, ESYS_TR session, const uint32_t *pcrs, size_t pcr_count) {
    if (pcr_count > 0) {
        TPM2B_DIGEST empty = {0};
        TPML_PCR_SELECTION selection = pcr_selection(pcrs, pcr_count);
        TSS2_RC rc = Esys_PolicyPCR(tpm->esys, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &empty, &selection);
        if (rc != TSS2_RC_SUCCESS) return rc;
    }
    return Esys_PolicyAuthValue(tpm->esys, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE);
}

static TSS2_RC make_auth(const uint8_t *auth, size_t auth_len, TPM2B_AUTH *out) {
    if (auth_len > sizeof out->buffer) return TSS2_ESYS_RC_BAD_VALUE;
    out->size = (UINT16)auth_len;
    memcpy(out->buffer, auth, auth_len);
    return TSS2_RC_SUCCESS;
}

uint32_t cordon_tpm_seal(
    cordon_tpm *tpm, const uint8_t *auth, size_t auth_len, const uint8_t *secret, size_t secret_len,
    const uint32_t *pcrs, size_t pcr_count, uint8_t *public_out, size_t *public_len, uint8_t *private_out,
    size_t *private_len) {
    if (secret_len > CORDON_TPM_SECRET_MAX) return TSS2_ESYS_RC_BAD_VALUE;
    ESYS_TR primary = ESYS_TR_NONE, trial = ESYS_TR_NONE;
    TPM2B_DIGEST *digest = NULL;
    TPM2B_PRIVATE *private_blob = NULL;
    TPM2B_PUBLIC *public_blob = NULL;
    TPM2B_SENSITIVE_CREATE sensitive = {0};
    TPMT_SYM_DEF none = {.algorithm = TPM2_ALG_NULL};
    TSS2_RC rc = create_primary(tpm, &primary);
    if (rc != TSS2_RC_SUCCESS) goto done;
    rc = Esys_StartAuthSession(
        tpm->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, NULL, TPM2_SE_TRIAL, &none,
        TPM2_ALG_SHA256, &trial);
    if (rc != TSS2_RC_SUCCESS) goto done;
    rc = apply_policy(tpm, trial, pcrs, pcr_count);
    if (rc != TSS2_RC_SUCCESS) goto done;
    rc = Esys_PolicyGetDigest(tpm->esys, trial, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &digest);
    if (rc != TSS2_RC_SUCCESS) goto done;

    TPM2B_PUBLIC template = {0};
    template.publicArea.type = TPM2_ALG_KEYEDHASH;
    template.publicArea.nameAlg = TPM2_ALG_SHA256;
    // No USERWITHAUTH (only the policy authorizes), no NODA (wrong authValues count).
    template.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT;
    template.publicArea.authPolicy = *digest;
    template.publicArea.parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL;
    rc = make_auth(auth, auth_len, &sensitive.sensitive.userAuth);
    if (rc != TSS2_RC_SUCCESS) goto done;
    sensitive.sensitive.data.size = (UINT16)secret_len;
    memcpy(sensitive.sensitive.data.buffer, secret, secret_len);
    TPM2B_DATA outside = {0};
    TPML_PCR_SELECTION creation = {0};
    rc = Esys_Create(
        tpm->esys, primary, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &template, &outside, &creation,
        &private_blob, &public_blob, NULL, NULL, NULL);
    if (rc != TSS2_RC_SUCCESS) goto done;
    size_t offset = 0;
    rc = Tss2_MU_TPM2B_PUBLIC_Marshal(public_blob, public_out, CORDON_TPM_BLOB_MAX, &offset);
    if (rc != TSS2_RC_SUCCESS) goto done;
    *public_len = offset;
    offset = 0;
    rc = Tss2_MU_TPM2B_PRIVATE_Marshal(private_blob, private_out, CORDON_TPM_BLOB_MAX, &offset);
    if (rc != TSS2_RC_SUCCESS) goto done;
    *private_len = offset;
done:
    wipe(&sensitive, sizeof sensitive);
    Esys_Free(digest);
    Esys_Free(private_blob);
    Esys_Free(public_blob);
    if (trial != ESYS_TR_NONE) Esys_FlushContext(tpm->esys, trial);
    if (primary != ESYS_TR_NONE) Esys_FlushContext(tpm->esys, primary);
    return rc;
}

uint32_t cordon_tpm_unseal(
    cordon_tpm *tpm, const uint8_t *auth, size_t auth_len, const uint8_t *public_blob, size_t public_len,
    const uint8_t *private_blob, size_t private_len, const uint32_t *pcrs, size_t pcr_count, uint8_t *secret_out,
    size_t *secret_len, int *stage) {
    TPM2B_PUBLIC in_public = {0};
    TPM2B_PRIVATE in_private = {0};
    TPM2B_AUTH object_auth = {0};
    TPM2B_SENSITIVE_DATA *data = NULL;
    ESYS_TR primary = ESYS_TR_NONE, object = ESYS_TR_NONE, session = ESYS_TR_NONE;
    size_t offset = 0;
    *stage = CORDON_TPM_STAGE_BLOBS;
    TSS2_RC rc = Tss2_MU_TPM2B_PUBLIC_Unmarshal(public_blob, public_len, &offset, &in_public);
    if (rc != TSS2_RC_SUCCESS) goto done;
    offset = 0;
    rc = Tss2_MU_TPM2B_PRIVATE_Unmarshal(private_blob, private_len, &offset, &in_private);
    if (rc != TSS2_RC_SUCCESS) goto done;
    *stage = CORDON_TPM_STAGE_PRIMARY;
    rc = create_primary(tpm, &primary);
    if (rc != TSS2_RC_SUCCESS) goto done;
    *stage = CORDON_TPM_STAGE_LOAD;
    rc = Esys_Load(tpm->esys, primary, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &in_private, &in_public, &object);
    if (rc != TSS2_RC_SUCCESS) goto done;
    // Salted with the primary: the session key, and so the authValue's HMAC and the encrypted
    // response, are unknown to anyone watching the bus.
    TPMT_SYM_DEF aes = {.algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB};
    *stage = CORDON_TPM_STAGE_SESSION;
    rc = Esys_StartAuthSession(
        tpm->esys, primary, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, NULL, TPM2_SE_POLICY, &aes,
        TPM2_ALG_SHA256, &session);
    if (rc != TSS2_RC_SUCCESS) goto done;
    rc = Esys_TRSess_SetAttributes(
        tpm->esys, session, TPMA_SESSION_ENCRYPT, TPMA_SESSION_ENCRYPT | TPMA_SESSION_CONTINUESESSION);
    if (rc != TSS2_RC_SUCCESS) goto done;
    rc = apply_policy(tpm, session, pcrs, pcr_count);
    if (rc != TSS2_RC_SUCCESS) goto done;
    rc = make_auth(auth, auth_len, &object_auth);
    if (rc != TSS2_RC_SUCCESS) goto done;
    rc = Esys_TR_SetAuth(tpm->esys, object, &object_auth);
    if (rc != TSS2_RC_SUCCESS) goto done;
    *stage = CORDON_TPM_STAGE_UNSEAL;
    rc = Esys_Unseal(tpm->esys, object, session, ESYS_TR_NONE, ESYS_TR_NONE, &data);
    // Without continueSession the TPM closed the session with the command, whatever its outcome.
    if (rc != TSS2_RC_SUCCESS) goto done;
    if (data->size > CORDON_TPM_SECRET_MAX) {
        rc = TSS2_ESYS_RC_BAD_VALUE;
        goto done;
    }
    memcpy(secret_out, data->buffer, data->size);
    *secret_len = data->size;
done:
    if (data != NULL) wipe(data, sizeof *data);
    Esys_Free(data);
    wipe(&object_auth, sizeof object_auth);
    if (session != ESYS_TR_NONE && rc != TSS2_RC_SUCCESS) Esys_FlushContext(tpm->esys, session);
    if (object != ESYS_TR_NONE) {
        // Clear the authValue ESYS keeps with the handle before the handle goes away.
        TPM2B_AUTH empty = {0};
        Esys_TR_SetAuth(tpm->esys, object, &empty);
        Esys_FlushContext(tpm->esys, object);
    }
    if (primary != ESYS_TR_NONE) Esys_FlushContext(tpm->esys, primary);
    return rc;
}

uint32_t cordon_tpm_da_state_read(cordon_tpm *tpm, cordon_tpm_da_state *out) {
    TPMI_YES_NO more = 0;
    TPMS_CAPABILITY_DATA *data = NULL;
    TSS2_RC rc = Esys_GetCapability(
        tpm->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_TPM_PROPERTIES, TPM2_PT_PERMANENT,
        TPM2_PT_LOCKOUT_RECOVERY - TPM2_PT_PERMANENT + 1, &more, &data);
    if (rc != TSS2_RC_SUCCESS) return rc;
    memset(out, 0, sizeof *out);
    TPML_TAGGED_TPM_PROPERTY *properties = &data->data.tpmProperties;
    for (UINT32 index = 0; index < properties->count; index++) {
        UINT32 value = properties->tpmProperty[index].value;
        switch (properties->tpmProperty[index].property) {
        case TPM2_PT_PERMANENT: out->in_lockout = (value & TPMA_PERMANENT_INLOCKOUT) != 0; break;
        case TPM2_PT_LOCKOUT_COUNTER: out->lockout_counter = value; break;
        case TPM2_PT_MAX_AUTH_FAIL: out->max_auth_fail = value; break;
        case TPM2_PT_LOCKOUT_INTERVAL: out->lockout_interval = value; break;
        case TPM2_PT_LOCKOUT_RECOVERY: out->lockout_recovery = value; break;
        default: break;
        }
    }
    Esys_Free(data);
    return TSS2_RC_SUCCESS;
}

uint32_t cordon_tpm_pcr_read(cordon_tpm *tpm, uint32_t index, uint8_t digest_out[32]) {
    TPML_PCR_SELECTION selection = pcr_selection(&index, 1);
    TPML_DIGEST *values = NULL;
    TSS2_RC rc = Esys_PCR_Read(
        tpm->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &selection, NULL, NULL, &values);
    if (rc != TSS2_RC_SUCCESS) return rc;
    if (values->count != 1 || values->digests[0].size != 32) {
        Esys_Free(values);
        return TSS2_ESYS_RC_MALFORMED_RESPONSE;
    }
    memcpy(digest_out, values->digests[0].buffer, 32);
    Esys_Free(values);
    return TSS2_RC_SUCCESS;
}

const char *cordon_tpm_rc_text(uint32_t rc) { return Tss2_RC_Decode(rc); }

uint32_t cordon_tpm_load_check(
    cordon_tpm *tpm, const uint8_t *public_blob, size_t public_len, const uint8_t *private_blob,
    size_t private_len) {
    TPM2B_PUBLIC in_public = {0};
    TPM2B_PRIVATE in_private = {0};
    ESYS_TR primary = ESYS_TR_NONE, object = ESYS_TR_NONE;
    size_t offset = 0;
    TSS2_RC rc = Tss2_MU_TPM2B_PUBLIC_Unmarshal(public_blob, public_len, &offset, &in_public);
    if (rc != TSS2_RC_SUCCESS) return rc;
    offset = 0;
    rc = Tss2_MU_TPM2B_PRIVATE_Unmarshal(private_blob, private_len, &offset, &in_private);
    if (rc != TSS2_RC_SUCCESS) return rc;
    rc = create_primary(tpm, &primary);
    if (rc != TSS2_RC_SUCCESS) return rc;
    rc = Esys_Load(tpm->esys, primary, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &in_private, &in_public, &object);
    if (object != ESYS_TR_NONE) Esys_FlushContext(tpm->esys, object);
    Esys_FlushContext(tpm->esys, primary);
    return rc;
}

/// An ESYS handle for NV index `index` with `auth` set on it.
static TSS2_RC nv_handle(cordon_tpm *tpm, uint32_t index, const uint8_t *auth, size_t auth_len, ESYS_TR *out) {
    TSS2_RC rc = Esys_TR_FromTPMPublic(tpm->esys, index, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, out);
    if (rc != TSS2_RC_SUCCESS) return rc;
    TPM2B_AUTH value = {0};
    rc = make_auth(auth, auth_len, &value);
    if (rc == TSS2_RC_SUCCESS) rc = Esys_TR_SetAuth(tpm->esys, *out, &value);
    wipe(&value, sizeof value);
    if (rc != TSS2_RC_SUCCESS) {
        Esys_TR_Close(tpm->esys, out);
        *out = ESYS_TR_NONE;
    }
    return rc;
}

/// Forgets `handle` in ESYS (an NV index stays defined in the TPM), clearing its authValue first.
static void nv_release(cordon_tpm *tpm, ESYS_TR *handle) {
    if (*handle == ESYS_TR_NONE) return;
    TPM2B_AUTH empty = {0};
    Esys_TR_SetAuth(tpm->esys, *handle, &empty);
    Esys_TR_Close(tpm->esys, handle);
}

uint32_t cordon_tpm_nv_counter_define(cordon_tpm *tpm, uint32_t index, const uint8_t *auth, size_t auth_len) {
    TPM2B_AUTH value = {0};
    TSS2_RC rc = make_auth(auth, auth_len, &value);
    if (rc != TSS2_RC_SUCCESS) return rc;
    TPM2B_NV_PUBLIC info = {0};
    info.nvPublic.nvIndex = index;
    info.nvPublic.nameAlg = TPM2_ALG_SHA256;
    info.nvPublic.attributes = (TPM2_NT_COUNTER << TPMA_NV_TPM2_NT_SHIFT) | TPMA_NV_AUTHWRITE | TPMA_NV_AUTHREAD
        | TPMA_NV_NO_DA;
    info.nvPublic.dataSize = 8;
    ESYS_TR handle = ESYS_TR_NONE;
    rc = Esys_NV_DefineSpace(
        tpm->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &value, &info, &handle);
    wipe(&value, sizeof value);
    if (rc != TSS2_RC_SUCCESS) return rc;
    nv_release(tpm, &handle);
    // A counter reads only once written: the first increment sets it to the highest value any
    // counter of this TPM ever had, so a counter defined again never repeats an old value.
    return cordon_tpm_nv_counter_increment(tpm, index, auth, auth_len);
}

uint32_t cordon_tpm_nv_counter_increment(cordon_tpm *tpm, uint32_t index, const uint8_t *auth, size_t auth_len) {
    ESYS_TR handle = ESYS_TR_NONE;
    TSS2_RC rc = nv_handle(tpm, index, auth, auth_len, &handle);
    if (rc != TSS2_RC_SUCCESS) return rc;
    rc = Esys_NV_Increment(tpm->esys, handle, handle, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE);
    nv_release(tpm, &handle);
    return rc;
}

uint32_t cordon_tpm_nv_counter_read(
    cordon_tpm *tpm, uint32_t index, const uint8_t *auth, size_t auth_len, uint64_t *value_out) {
    ESYS_TR handle = ESYS_TR_NONE;
    TSS2_RC rc = nv_handle(tpm, index, auth, auth_len, &handle);
    if (rc != TSS2_RC_SUCCESS) return rc;
    TPM2B_MAX_NV_BUFFER *data = NULL;
    rc = Esys_NV_Read(tpm->esys, handle, handle, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, 8, 0, &data);
    nv_release(tpm, &handle);
    if (rc != TSS2_RC_SUCCESS) return rc;
    if (data->size != 8) {
        Esys_Free(data);
        return TSS2_ESYS_RC_MALFORMED_RESPONSE;
    }
    uint64_t value = 0;
    for (int byte = 0; byte < 8; byte++) value = (value << 8) | data->buffer[byte];
    Esys_Free(data);
    *value_out = value;
    return TSS2_RC_SUCCESS;
}

uint32_t cordon_tpm_nv_undefine(cordon_tpm *tpm, uint32_t index) {
    ESYS_TR handle = ESYS_TR_NONE;
    TSS2_RC rc = Esys_TR_FromTPMPublic(tpm->esys, index, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &handle);
    if (rc != TSS2_RC_SUCCESS) return rc;
    rc = Esys_NV_UndefineSpace(tpm->esys, ESYS_TR_RH_OWNER, handle, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE);
    if (rc != TSS2_RC_SUCCESS) Esys_TR_Close(tpm->esys, &handle);
    return rc;
}

uint32_t cordon_tpm_policy_check(
    cordon_tpm *tpm, const uint8_t *public_blob, size_t public_len, const uint32_t *pcrs, size_t pcr_count,
    int *matches) {
    TPM2B_PUBLIC in_public = {0};
    TPM2B_DIGEST *digest = NULL;
    ESYS_TR trial = ESYS_TR_NONE;
    TPMT_SYM_DEF none = {.algorithm = TPM2_ALG_NULL};
    size_t offset = 0;
    *matches = 0;
    TSS2_RC rc = Tss2_MU_TPM2B_PUBLIC_Unmarshal(public_blob, public_len, &offset, &in_public);
    if (rc != TSS2_RC_SUCCESS) return rc;
    rc = Esys_StartAuthSession(
        tpm->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, NULL, TPM2_SE_TRIAL, &none,
        TPM2_ALG_SHA256, &trial);
    if (rc != TSS2_RC_SUCCESS) return rc;
    // The same policy, in the same order, as the seal computed: PolicyPCR over the current values.
    rc = apply_policy(tpm, trial, pcrs, pcr_count);
    if (rc == TSS2_RC_SUCCESS)
        rc = Esys_PolicyGetDigest(tpm->esys, trial, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &digest);
    if (rc == TSS2_RC_SUCCESS) {
        const TPM2B_DIGEST *sealed = &in_public.publicArea.authPolicy;
        *matches = digest->size == sealed->size && memcmp(digest->buffer, sealed->buffer, digest->size) == 0;
    }
    Esys_Free(digest);
    Esys_FlushContext(tpm->esys, trial);
    return rc;
}
