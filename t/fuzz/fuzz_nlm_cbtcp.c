/*
 * fuzz_nlm_cbtcp: libFuzzer target for the nfsrdma-client's lock callback
 * service over TCP: fuzz_nlm_cb.c built for its record-marked connections
 * (see there).
 */
#define FUZZ_CB_TCP 1
#include "fuzz_nlm_cb.c"
