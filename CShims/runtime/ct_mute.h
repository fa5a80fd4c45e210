// Adaptive muting: a function that has run very often and never came near the threshold stops
// being timed. Its hook call sites are patched out of the running code (ct_patch.c), so its calls
// cost (close to) nothing and its time is simply part of its caller's. The rule and its reasons
// are in ct_mute.c and docs/design.md ("Adaptive muting").
//
// What the hooks do for it (ct_hooks.c), all but the first out of line:
//   - every exit counts down a per-thread countdown; at zero, one exit in about 128 is a sample
//     (ct_mute_sample): it adds the period to its function's estimated call count and teaches the
//     function's call sites (the hooks' return addresses);
//   - an exit lasting at least `ct_mute_near_ticks` (a tenth of the threshold) goes out of line
//     (ct_mute_keeps), which counts a near hit and says whether the call is recorded;
//   - the in-hook check (ct_mute_skips), only while some muted function could not be fully patched;
//   - frames of muted functions that lost their exit to a patch are dropped, never recorded as
//     unwound (ct_mute_drops_frame, from ct_thread.c).
#ifndef CT_MUTE_H
#define CT_MUTE_H

#include "ct_base.h"
#include <stdatomic.h>

// Exits this long or longer go out of line to ct_mute_keeps (the threshold itself when muting is
// off; 0 until the first such exit has set it).
extern uint64_t ct_mute_near_ticks;
// Per thread: exits left until the next sample.
extern CT_TLS uint32_t ct_mute_countdown;
// Some muted function relies on the in-hook check, and the bits of those functions' hashes.
extern _Atomic uint32_t ct_mute_filter_on;
#define CT_MUTE_FILTER_BITS 16
extern _Atomic uint64_t ct_mute_filter_bits[(1u << CT_MUTE_FILTER_BITS) / 64];

CT_NO_INSTRUMENT static inline uint64_t ct_mute_hash(uintptr_t fn) {
    return ((uint64_t)fn * 0x9E3779B97F4A7C15ull) >> 32;
}

// Out of line: is `fn` muted with the in-hook check? (The filter bit was set.)
bool ct_mute_filtered(uintptr_t fn);

// Both hooks, first thing: true when the call is muted in the hook and must not be timed. One
// relaxed load while no function needs the check.
CT_NO_INSTRUMENT static inline bool ct_mute_skips(uintptr_t fn) {
    if (CT_LIKELY(!atomic_load_explicit(&ct_mute_filter_on, memory_order_relaxed))) return false;
    uint64_t h = ct_mute_hash(fn) & ((1u << CT_MUTE_FILTER_BITS) - 1);
    if (!((atomic_load_explicit(&ct_mute_filter_bits[h >> 6], memory_order_relaxed) >> (h & 63)) & 1)) return false;
    return ct_mute_filtered(fn);
}

// One sampled exit of `fn`: `enter_ra` is where its enter hook returned to, `exit_ra` where this
// exit hook returns to (== `site` when gcc tail-called it).
CT_SLOW_PATH void ct_mute_sample(uintptr_t fn, uintptr_t enter_ra, uintptr_t exit_ra, uintptr_t site);
// An exit of at least ct_mute_near_ticks: counts a near hit. True when the call is to be recorded
// (it reached the threshold and its function is not muted).
CT_SLOW_PATH bool ct_mute_keeps(uintptr_t fn, uint64_t duration);
// An exit hook found no frame of its own (its enter site is patched already): a muted function's
// exit site still to patch is learned here.
CT_SLOW_PATH void ct_mute_stray_exit(uintptr_t fn, uintptr_t exit_ra, uintptr_t site);
// A frame closed without its exit hook: true when it belongs to a muted function (drop it
// silently; its exit site was patched while it ran, or its enter site is still to patch).
bool ct_mute_drops_frame(uintptr_t fn, uintptr_t enter_ra);
// From the drain thread's loop: mutes the functions the rule picked, patches newly learned sites,
// writes MUTED records and the header's counters.
void ct_mute_drain_tick(void);

#endif
