// The hooks' one gate (ct_hooks.c): should this hook skip its call? Muting's in-hook check
// (ct_mute.c) and CALLTRACE_FILTER's included functions (ct_filter.c) share one word, so that the
// hooks load that word alone while neither is on. Its own header, above both: the filter builds on
// muting (its exclusions are muted functions), and muting knows nothing of the filter.
#ifndef CT_SKIP_H
#define CT_SKIP_H

#include "ct_mute.h"

// CALLTRACE_FILTER's included functions (ct_filter.c): is this call outside every one on its thread?
// Compares the thread's depth with its outermost open included call's; asks ct_mute_skips's own
// question first.
bool ct_filter_skips(uintptr_t fn, bool exit, uintptr_t caller_sp, uintptr_t site);
// The enter hook of `fn` closed frames a jump skipped (or counted calls beyond capacity) and pushes
// it at depth `live` + 1: true when that ended the thread's included call and `fn` is outside every
// one (not to be pushed). Called only while CT_SKIP_INCLUDED is on, out of line.
bool ct_filter_settled(uintptr_t fn, uint64_t live);

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
