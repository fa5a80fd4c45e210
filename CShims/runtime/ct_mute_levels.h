// Muting inside a recursion: a recursive function's inner calls stop being timed, its outer ones
// stay timed (docs/design.md, "Adaptive muting", "Inside a recursion"). Sleds only.
//
// Adaptive muting never mutes a function while a call of it is open beneath the sampled one: a
// recursion's slow calls are its outer ones. But an interpreter's call path (Lua's luaV_execute,
// luaD_precall: a callback from sort runs a Lua function inside the one that called sort), a tree
// walk or a quicksort then stays timed in its millions of fast inner calls, and on a real program
// that is most of what tracing costs. So, for up to CT_LEVELS - 1 functions with sleds (a slot
// more is the calibration's), each timed frame counts the calls of the function open beneath it
// and including it (5 bits each in the frame's `levels`, counted at the push from the frame
// below: a pop needs nothing), the samples
// and near exits of the function are counted by that *level* (0: no call of it beneath), and once
// every level from some `cap` on has made enough calls and none came near the threshold, a call
// with `cap` or more calls of the function open beneath it is not timed: its entry handler sees the
// count in the frame below and returns at once, pushing nothing; its exit handler finds no frame of
// its own and returns at once (as a muted function's while its exits wait). Its time is part of the
// timed call beneath it. The cap only goes down.
#ifndef CT_MUTE_LEVELS_H
#define CT_MUTE_LEVELS_H

#include "ct_base.h"
#include <stdatomic.h>

struct ct_thread;

#define CT_LEVELS 12        // functions counted by level at once (5 bits each in a frame's `levels`)
#define CT_LEVEL_BITS 5
#define CT_LEVEL_TOP 31     // a count saturates here; levels counted apart: 0 to CT_LEVEL_TOP - 1 (the last: deeper too)

// ct_sled_levels (ct_sled_table.h), by sled function number: 0 (not counted by level), or the
// function's slot (1..CT_LEVELS) << 5 | its cap (0: none yet; else a call with that many calls of
// it open beneath is not timed). Read by the entry handlers, written by a sampling thread.
// (ct_sled_levels is 16 bits a function.)
// Bumped when a function gets a slot: a thread whose `levels_epoch` differs counts its frames
// again (ct_mute_levels_recount) before it trusts their counts.
extern _Atomic uint32_t ct_levels_epoch;

#define CT_LEVEL_CAP_MASK 31u
CT_NO_INSTRUMENT static inline unsigned ct_levels_slot(uint16_t lv) { return lv >> CT_LEVEL_BITS; }
CT_NO_INSTRUMENT static inline unsigned ct_levels_cap(uint16_t lv) { return lv & CT_LEVEL_CAP_MASK; }
CT_NO_INSTRUMENT static inline unsigned ct_levels_shift(uint16_t lv) {
    return CT_LEVEL_BITS * (ct_levels_slot(lv) - 1u);
}
// How many calls of the function `lv` describes a frame's `levels` counts.
CT_NO_INSTRUMENT static inline unsigned ct_levels_count(uint64_t levels, uint16_t lv) {
    return ct_levels_slot(lv) ? (unsigned)(levels >> ct_levels_shift(lv)) & CT_LEVEL_TOP : 0;
}
// The `levels` of a new frame of that function, above a frame with `below`.
CT_NO_INSTRUMENT static inline uint64_t ct_levels_push(uint64_t below, uint16_t lv) {
    if (!ct_levels_slot(lv) || ct_levels_count(below, lv) == CT_LEVEL_TOP) return below;
    return below + (1ull << ct_levels_shift(lv));
}
// Is a call of that function above a frame with `below` one not to time?
CT_NO_INSTRUMENT static inline bool ct_levels_untimed(uint64_t below, uint16_t lv) {
    unsigned cap = ct_levels_cap(lv);
    return cap != 0 && ct_levels_count(below, lv) >= cap;
}

// A sampled exit (standing for `weight` calls) or a near exit (`near`, with `work`: enough timed
// calls beneath it to keep its function timed) of the function with sled number `number`, whose
// frame had `levels`.
void ct_mute_levels_note(uint32_t number, uint64_t levels, uint64_t weight, bool near, bool work);
// A look at the function (the muting rule's, in ct_mute_sample) found a call of it open beneath
// (`recursive`), or it is counted by level already: gives it a slot, or lowers its cap when its
// levels say so. True when the cap changed (its MUTED record is to be written).
bool ct_mute_levels_look(uint32_t number, bool recursive);
// The function's cap (0: none), for its MUTED record.
uint32_t ct_mute_levels_cap(uint32_t number);
// The overhead calibration's own recursive function (ct_overhead.c): a slot with `cap` for good.
void ct_mute_levels_fix(uint32_t number, unsigned cap);
// The calling thread counts its frames' levels again (a function got a slot since it last did).
void ct_mute_levels_recount(struct ct_thread *t);

#endif
