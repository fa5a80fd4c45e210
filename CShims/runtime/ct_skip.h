// The hooks' one gate (ct_hooks.c): should this hook skip its call? Muting's in-hook check
// (ct_mute.c) and CALLTRACE_FILTER's included functions (ct_filter.c) share one word, so that the
// hooks load that word alone while neither is on. Its own header, above both: the filter builds on
// muting (its exclusions are muted functions), and muting knows nothing of the filter.
#ifndef CT_SKIP_H
#define CT_SKIP_H

#include "ct_filter.h"
#include "ct_mute.h"

// Both hooks, first thing: true when the call is muted in the hook (or outside the filter's
// included functions) and must not be timed. One relaxed load while neither is on.
CT_NO_INSTRUMENT static inline bool ct_mute_skips(uintptr_t fn, bool exit, uintptr_t caller_sp, uintptr_t site) {
    uint32_t on = atomic_load_explicit(&ct_mute_filter_on, memory_order_relaxed);
    if (CT_LIKELY(!on)) return false;
    if (CT_UNLIKELY(on & CT_SKIP_INCLUDED)) return ct_filter_skips(fn, exit, caller_sp, site);
    uint64_t h = ct_mute_hash(fn) & ((1u << CT_MUTE_FILTER_BITS) - 1);
    if (!((atomic_load_explicit(&ct_mute_filter_bits[h >> 6], memory_order_relaxed) >> (h & 63)) & 1)) return false;
    return ct_mute_filtered(fn, exit, caller_sp, site);
}

#endif
