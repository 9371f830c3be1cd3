// The official NATS C client (nats.c, Debian libnats-dev): connections, subscriptions, JetStream.
// docs/ARCHITECTURE.md, "Fleet push": CNATS and CordonNATS.
#include <nats/nats.h>
