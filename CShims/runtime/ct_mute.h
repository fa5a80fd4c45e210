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
//   - an exit hook of a call that pushed no frame (its function's enter hooks are gone, its exit
//     hooks not yet: a call of it was open when it was muted) returns without a frame popped, and
//     now and then teaches the exit site (ct_mute_stray_exit).
#ifndef CT_MUTE_H
#define CT_MUTE_H

#include "ct_feature.h"
#include "ct_mute_rule.h"
#include <stdatomic.h>

// Exits this long or longer go out of line to ct_mute_keeps (the threshold itself when muting is
// off; 0 until the first such exit has set it).
extern uint64_t ct_mute_near_ticks;
// Per thread: exits left until the next sample; exits that pop nothing left until the next one of
// them teaches its site.
extern CT_TLS uint32_t ct_mute_countdown;
extern CT_TLS uint32_t ct_mute_stray_countdown;
// Some muted function relies on the in-hook check (CT_SKIP_MUTED), or CALLTRACE_FILTER records only
// inside its included functions (CT_SKIP_INCLUDED, ct_filter.c); and the bits of the hashes of the
// functions the in-hook check skips. One gate, so that the hooks load one word while neither is on.
enum { CT_SKIP_MUTED = 1u, CT_SKIP_INCLUDED = 2u };
extern _Atomic uint32_t ct_mute_filter_on;
#define CT_MUTE_FILTER_BITS 16
extern _Atomic uint64_t ct_mute_filter_bits[(1u << CT_MUTE_FILTER_BITS) / 64];

CT_NO_INSTRUMENT static inline uint64_t ct_mute_hash(uintptr_t fn) {
    return ((uint64_t)fn * 0x9E3779B97F4A7C15ull) >> 32;
}

// The enter hooks' side of the moment of muting (docs/design.md): one bit per hash of every
// function whose entry was muted, set by the drain thread before the barrier after which it lets
// the function's exits go. An enter hook that was already running when its site was patched reads
// its function's bit after its frame is published; set, it asks ct_mute_entry_muted (another
// function may share the bit) and takes the frame back (ct_stack_take_back). Sleds keep the same
// mark by function number (ct_sled_table.h).
#define CT_MUTE_ENTRY_BITS 18
extern _Atomic uint64_t ct_mute_entry_bits[(1u << CT_MUTE_ENTRY_BITS) / 64];

CT_NO_INSTRUMENT static inline bool ct_mute_entry_may_be_muted(uintptr_t fn) {
    uint64_t h = ct_mute_hash(fn) & ((1u << CT_MUTE_ENTRY_BITS) - 1);
    return (atomic_load_explicit(&ct_mute_entry_bits[h >> 6], memory_order_relaxed) >> (h & 63)) & 1;
}

// Out of line, the bit being set: is `fn`'s entry muted? Then `enter_ra` (where this enter hook
// returns to) is learned too, in case it is a site still to patch (gcc's inlined copy that first
// ran after the muting).
CT_SLOW_PATH bool ct_mute_entry_muted(uintptr_t fn, uintptr_t enter_ra);

// Out of line: is `fn` muted with the in-hook check (the filter bit was set), for this hook? An
// exit hook is skipped only once no call of the function was left open. `caller_sp` is the hook's
// CT_CALLER_SP() (its return address is the word below it), `site` the call site it was given: an
// excluded function's sites are learned here. (The hooks pass their frame, already in a register,
// rather than the return address, which the compiler would load ahead of the gate: measured, a
// spill and a load more per call on the path with no filter.)
bool ct_mute_filtered(uintptr_t fn, bool exit, uintptr_t caller_sp, uintptr_t site);

// The in-hook check alone (the hooks' gate, ct_skip.h, without the filter's part).
CT_NO_INSTRUMENT static inline bool ct_mute_skips_muted(uintptr_t fn, bool exit, uintptr_t caller_sp, uintptr_t site) {
    if (!(atomic_load_explicit(&ct_mute_filter_on, memory_order_relaxed) & CT_SKIP_MUTED)) return false;
    uint64_t h = ct_mute_hash(fn) & ((1u << CT_MUTE_FILTER_BITS) - 1);
    if (!((atomic_load_explicit(&ct_mute_filter_bits[h >> 6], memory_order_relaxed) >> (h & 63)) & 1)) return false;
    return ct_mute_filtered(fn, exit, caller_sp, site);
}

// CALLTRACE_FILTER's excluded functions (ct_filter.c), at trace open, before any of them ran: muted
// for good at once, both hooks, by the in-hook check, so that no call of theirs ever pushes a frame.
// Their first calls teach their sites (ct_mute_filtered), which the drain thread's next pass
// patches out as it patches a muted function's, so from then on they cost what a muted function
// does. No MUTED record: the trace names the filter instead. Returns how many were taken (a full
// neighbourhood of the table leaves one recorded). `late`: a library loaded after open, matched on
// the drain thread, whose functions may have calls open: their entries go at once, their exits
// once no call of theirs is open, as a muted function's.
size_t ct_mute_exclude(const uintptr_t *fns, size_t n, bool late);

// Is `fn` muted (its enter hooks patched or skipped)? Out of line, for the exit hook's rare case.
bool ct_mute_is_muted(uintptr_t fn);
// Are `fn`'s exit hooks gone too? A frame of it closed without its exit began as it was muted.
bool ct_mute_exit_lost(uintptr_t fn);

// One sampled exit of `fn`: `enter_ra` is where its enter hook returned to, `exit_ra` where this
// exit hook returns to (== `site` when gcc tail-called it). A sled's: `number` is the function's
// sled number and `levels` its frame's (ct_mute_levels.h); a hook's: both 0.
CT_SLOW_PATH void ct_mute_sample(uintptr_t fn, uintptr_t enter_ra, uintptr_t exit_ra, uintptr_t site, uint32_t number,
                                 uint64_t levels);
// An exit of at least ct_mute_near_ticks, with `descendants` timed calls beneath it, from a frame
// with `levels`: counts a near hit (one with work beneath it keeps its function timed for good).
// True when the call is to be recorded: it reached the threshold (muted or not: its frame was
// pushed before the muting).
CT_SLOW_PATH bool ct_mute_keeps(uintptr_t fn, uint64_t duration, uint64_t descendants, uint64_t levels);
// A sampled call of `fn` on a thread that does not record (one in about 128, counted down with
// ct_mute_countdown, which such a thread has no other use for): it stands for its period of calls.
// A function that only such threads run (`seen_recording` false: no recording thread has entered
// it) is muted once they have called it CT_MUTE_MIN_CALLS times, so that threads nobody records run
// at their uninstrumented speed (docs/design.md, "Threads that do not record").
CT_SLOW_PATH void ct_mute_passive_sample(uintptr_t fn, bool seen_recording);
// The same for a hook on such a thread (enter or `exit`; `ra` where the hook returns to, `site` the
// call site it was given): it also teaches the call sites to patch. A recording thread's samples
// (ct_mute_sample) are what say it ran there: a function a recording thread calls seldom may still
// be taken for one only unrecorded threads run.
CT_SLOW_PATH void ct_mute_passive_hook_sample(uintptr_t fn, bool exit, uintptr_t ra, uintptr_t site);
// An exit hook found no frame of its own (its enter site is patched already): a muted function's
// exit site still to patch is learned here.
CT_SLOW_PATH void ct_mute_stray_exit(uintptr_t fn, uintptr_t exit_ra, uintptr_t site);
// The feature (ct_feature.h). Its pass, on the drain thread: mutes the functions the rule picked,
// patches newly learned sites, writes MUTED records and the header's counters. It wants the next
// pass soon while exit hooks wait for open calls to end. After a fork: the code lock is reset.
extern const struct ct_feature ct_mute_feature;

#endif
