// The header page of the open trace (NULL while none is open) and the counters kept in it. Any
// thread, and signal handlers, may count into it: every update is one atomic operation.
#ifndef CT_HEADER_H
#define CT_HEADER_H

#include "ct_format.h"

extern struct ct_file_header *_Atomic ct_header;

CT_NO_INSTRUMENT static inline struct ct_file_header *ct_header_get(void) {
    return atomic_load_explicit(&ct_header, memory_order_acquire);
}

// Records why records were lost; the first errno given is kept.
CT_NO_INSTRUMENT static inline void ct_header_lose(uint32_t reason, int err) {
    struct ct_file_header *h = ct_header_get();
    if (!h) return;
    if (err) {
        uint32_t none = 0;
        atomic_compare_exchange_strong_explicit(&h->lost_errno, &none, (uint32_t)err, memory_order_relaxed,
                                                memory_order_relaxed);
    }
    if ((atomic_load_explicit(&h->lost, memory_order_relaxed) & reason) != reason)
        atomic_fetch_or_explicit(&h->lost, reason, memory_order_relaxed);
}

// A call that may have been slow lost to muting (its exit hook gone while it was open): counted
// apart from the records dropped for want of a block, under its own reason.
CT_NO_INSTRUMENT static inline void ct_header_drop_muted_call(void) {
    struct ct_file_header *h = ct_header_get();
    if (!h) return;
    atomic_fetch_add_explicit(&h->muting_drops, 1, memory_order_relaxed);
    ct_header_lose(CT_LOST_MUTING, 0);
}

// One record dropped for want of a block; `reason` is a CT_LOST_* bit (one of the ring's).
CT_NO_INSTRUMENT static inline void ct_header_drop(uint32_t reason) {
    struct ct_file_header *h = ct_header_get();
    if (!h) return;
    atomic_fetch_add_explicit(&h->drops, 1, memory_order_relaxed);
    ct_header_lose(reason, 0);
}

#endif
