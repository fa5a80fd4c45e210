// Muting inside a recursion (see ct_mute_levels.h; docs/design.md, "Adaptive muting").
//
// A function gets a slot at the first look of the muting rule (ct_mute_sample) that finds a call of
// it open beneath the sampled one. From then on its samples (estimated calls) and near exits (exact)
// are counted by level. At each later look (after twice as many calls each time) its cap becomes
// the shallowest level r >= 1 such that level r itself has made CT_MUTE_MIN_CALLS calls, the levels
// from r on have come near the threshold at most once in CT_MUTE_NEAR_RATIO calls, and no near call
// at r or deeper had CT_MUTE_WORK_CALLS timed calls beneath it: the same rule as for a whole
// function, kept apart by level, since a recursion's outer calls are the slow ones. Level 0 (no
// call of it beneath) is never capped here: a function whose outermost calls are all fast too is
// muted whole, at a look that finds none of its calls open (ct_mute.c).
//
// Counts are per slot, never reset (a function never stops being counted); CT_LEVELS slots, the
// first kept for the overhead calibration's own function (ct_overhead.c), the others given first
// come first served; a function that finds none free stays timed at every level, as before.
#include "ct_mute_levels.h"
#include "ct_mute_rule.h"
#include "ct_sled_table.h"
#include "ct_thread.h"

_Atomic uint32_t ct_levels_epoch = 1;   // a new thread's 0 differs: it counts before it trusts

struct level_slot {
    _Atomic uint32_t number;             // the sled function number; 0: free
    _Atomic uint64_t calls[CT_LEVEL_TOP + 1];   // estimated from samples, by level (the last: deeper)
    _Atomic uint64_t near[CT_LEVEL_TOP + 1];    // near exits, by level
    _Atomic uint32_t work;               // bit per level: a near call there had work beneath it
};

static struct level_slot slots[CT_LEVELS];

CT_NO_INSTRUMENT static uint16_t levels_of(uint32_t number) {
    return number && number < CT_SLED_MAX_FNS && ct_sled_levels
               ? atomic_load_explicit(&ct_sled_levels[number], memory_order_relaxed) : 0;
}

CT_NO_INSTRUMENT void ct_mute_levels_note(uint32_t number, uint64_t levels, uint64_t weight, bool near, bool work) {
    uint16_t lv = levels_of(number);
    unsigned count = ct_levels_count(levels, lv);
    // 0: the frame was pushed before its function got a slot (or before its thread counted again).
    if (count == 0) return;
    unsigned level = count - 1;
    struct level_slot *s = &slots[ct_levels_slot(lv) - 1];
    if (weight) atomic_fetch_add_explicit(&s->calls[level], weight, memory_order_relaxed);
    if (near) {
        atomic_fetch_add_explicit(&s->near[level], 1, memory_order_relaxed);
        if (work) atomic_fetch_or_explicit(&s->work, 1u << level, memory_order_relaxed);
    }
}

// The shallowest level the slot's counts allow as a cap, or 0.
CT_NO_INSTRUMENT static unsigned allowed_cap(struct level_slot *s) {
    uint32_t work = atomic_load_explicit(&s->work, memory_order_relaxed);
    uint64_t calls_from = 0, near_from = 0;
    unsigned cap = 0;
    for (unsigned r = CT_LEVEL_TOP; r >= 1; r--) {
        if (work >> r) break;   // a near call with work beneath at r or deeper: no cap at r or above
        uint64_t calls = atomic_load_explicit(&s->calls[r], memory_order_relaxed);
        calls_from += calls;
        near_from += atomic_load_explicit(&s->near[r], memory_order_relaxed);
        if (calls >= CT_MUTE_MIN_CALLS && near_from * CT_MUTE_NEAR_RATIO <= calls_from) cap = r;
    }
    return cap;
}

// Gives `number` a slot from [first, end) with `cap`, unless it has one. True when this call did.
CT_NO_INSTRUMENT static bool claim(uint32_t number, unsigned first, unsigned end, unsigned cap) {
    for (unsigned i = first; i < end; i++) {
        uint32_t free = 0;
        if (!atomic_compare_exchange_strong_explicit(&slots[i].number, &free, number, memory_order_relaxed,
                                                     memory_order_relaxed)) {
            if (free == number) return false;  // another thread took one for it meanwhile
            continue;
        }
        atomic_store_explicit(&ct_sled_levels[number], (uint16_t)((i + 1) << CT_LEVEL_BITS | (cap & CT_LEVEL_CAP_MASK)),
                              memory_order_relaxed);
        atomic_fetch_add_explicit(&ct_levels_epoch, 1, memory_order_release);
        return true;
    }
    return false;
}

CT_NO_INSTRUMENT bool ct_mute_levels_look(uint32_t number, bool recursive) {
    if (!number || number >= CT_SLED_MAX_FNS || !ct_sled_levels) return false;
    uint16_t lv = levels_of(number);
    if (lv == 0) {
        // Slot 0 is the calibration's (ct_mute_levels_fix).
        if (recursive && claim(number, 1, CT_LEVELS, 0)) {
            // This thread's frames are counted now, so that its next samples count by level.
            ct_mute_levels_recount(&ct_self);
        }
        return false;
    }
    unsigned cap = allowed_cap(&slots[ct_levels_slot(lv) - 1]);
    // The cap only comes down: two threads looking at once store the lower one.
    for (;;) {
        unsigned current = ct_levels_cap(lv);
        if (cap == 0 || (current != 0 && cap >= current)) return false;
        if (atomic_compare_exchange_weak_explicit(&ct_sled_levels[number], &lv,
                                                  (uint16_t)((lv & ~CT_LEVEL_CAP_MASK) | cap), memory_order_relaxed,
                                                  memory_order_relaxed))
            return true;
    }
}

CT_NO_INSTRUMENT uint32_t ct_mute_levels_cap(uint32_t number) { return ct_levels_cap(levels_of(number)); }

CT_NO_INSTRUMENT void ct_mute_levels_fix(uint32_t number, unsigned cap) {
    if (!number || number >= CT_SLED_MAX_FNS || !ct_sled_levels || levels_of(number)) return;
    claim(number, 0, 1, cap);
}

CT_NO_INSTRUMENT void ct_mute_levels_recount(struct ct_thread *t) {
    uint32_t epoch = atomic_load_explicit(&ct_levels_epoch, memory_order_acquire);
    uintptr_t fns[CT_LEVELS];
    uint16_t lvs[CT_LEVELS];
    unsigned n = 0;
    for (unsigned i = 0; i < CT_LEVELS; i++) {
        uint32_t number = atomic_load_explicit(&slots[i].number, memory_order_relaxed);
        uint16_t lv = levels_of(number);
        if (lv) {
            fns[n] = ct_sled_fn(number);
            lvs[n++] = lv;
        }
    }
    uint64_t depth = t->depth > t->cap ? t->cap : t->depth;
    uint64_t levels = 0;
    for (uint64_t d = 0; d < depth; d++) {
        for (unsigned i = 0; i < n; i++)
            if (t->frames[d].fn == fns[i]) levels = ct_levels_push(levels, lvs[i]);
        t->frames[d].levels = levels;
    }
    t->levels_epoch = epoch;
}
