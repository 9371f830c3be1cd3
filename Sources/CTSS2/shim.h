// The TPM Software Stack (tpm2-tss, Debian libtss2-dev): ESYS, the TCTI loader, RC decoding and
// marshalling. docs/ARCHITECTURE.md, "Modules": CTSS2 and CCordonTPM.
#include <tss2/tss2_esys.h>
#include <tss2/tss2_tctildr.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_mu.h>
