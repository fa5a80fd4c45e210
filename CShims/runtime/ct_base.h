// Common macros for the runtime. Every runtime function carries CT_NO_INSTRUMENT, so that even a
// build that (wrongly) passes -finstrument-functions cannot make a hook call itself.
#ifndef CT_BASE_H
#define CT_BASE_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#define CT_NO_INSTRUMENT __attribute__((no_instrument_function))
#define CT_EXPORT __attribute__((visibility("default")))
#define CT_LIKELY(x) __builtin_expect(!!(x), 1)
#define CT_UNLIKELY(x) __builtin_expect(!!(x), 0)
// For the hooks' slow paths: out of line, so that the fast paths stay small. (clang's
// preserve_most convention would spare the fast paths some register saves, but measured no faster
// here, and a signal storm test misbehaved with it, so it is not used.)
#define CT_SLOW_PATH __attribute__((noinline))
// initial-exec TLS: a fixed offset from %fs, no __tls_get_addr call. The runtime is always loaded at
// start-up (linked or LD_PRELOADed), never dlopen'ed, so its TLS lives in the static TLS block.
#define CT_TLS __thread __attribute__((tls_model("initial-exec")))

#endif
