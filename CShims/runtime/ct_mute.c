// Adaptive muting (see ct_mute.h): which functions stop being timed, and when. The reasons for
// each number are in docs/design.md ("Adaptive muting"); in short:
//
// The rule. A function is muted once its estimated call count reaches CT_MUTE_MIN_CALLS and at most
// one call in CT_MUTE_NEAR_RATIO came "near" the threshold (lasted a tenth of it or more), but never
//   - while a call of it is open beneath the sampled one on the sampling thread (recursion: its outer
//     calls are the slow ones; open_beneath, which looks again after twice as many calls);
//   - once a near call of it had CT_MUTE_WORK_CALLS timed calls or more beneath it (`keep_timed`:
//     its time came from work, not from a moment off the CPU);
//   - at threshold 0 (every call is wanted).
// Counting needs no per-call lookup: one exit in about 128 per thread is sampled (the countdown is
// reloaded with 96..159 at random, so a loop's period cannot alias with it) and adds its period to
// its function's count; near hits are counted exactly, since they already leave the fast path.
//
// The table: open addressing on the function's address, lock-free (the key is claimed with a CAS,
// counters are atomic adds). It is static (.bss: only the pages used cost memory, up to 3.4 MB)
// and never shrinks; when a function's neighbourhood is full, it is simply never muted. The drain
// thread finds its work through a bitmap of entries (work_bits), never by walking the table.
//
// Muting a function (the drain thread, never a program thread): its state goes PENDING (the
// sampling thread that saw the rule met), then MUTED; its entry is marked muted for the entry
// handlers (mark_entry_muted), and its learned enter sites are verified byte for byte and patched
// (ct_patch.c) at once, followed by a barrier on every thread. Its exit sites wait
// (exit_wait_bits) until a look at every recording thread's open calls (ct_open_frames.c), made
// after that barrier, finds none of its calls open: a call that was running when its function was
// muted ends through its exit hook. An entry handler already running when its entry went either
// published its frame before the barrier (the look sees it) or reads the mark after publishing
// (and takes the frame back): no frame of the function can appear once the look found none. A
// site that cannot be patched (not verified, W^X, a split store), or more sites than the table
// keeps, turns on the in-hook check for that function instead (enters at once, exits on the same
// terms as patching), so it is cheap either way and both hooks agree.
#include "ct_mute.h"
#include "ct_ring.h"
#include "ct_clock.h"
#include "ct_header.h"
#include "ct_meta.h"
#include "ct_mute_levels.h"
#include "ct_open_frames.h"
#include "ct_patch.h"
#include "ct_runtime.h"
#include "ct_sled_table.h"
#include "ct_thread.h"
#include "ct_writer.h"

#define CT_MUTE_SLOTS 16384u         // functions tracked
#define CT_MUTE_PROBES 64u
#define CT_MUTE_SITES 8              // learned enter and exit return addresses per function
_Static_assert(CT_MUTE_SITES <= 8, "mute_entry.done has 8 bits for each kind of site");
#define CT_MUTE_TAILS 8
#define CT_MUTE_TAIL_STRAYS 10000u       // tail exits still running after muting: one was missed

enum { STATE_NONE, STATE_PENDING, STATE_MUTED };
// The MUTED record's `how` bits (docs/trace-format.md); HOW_LEVELS is the record's own, never in
// an entry's `how`.
enum { HOW_PATCHED = 1u, HOW_IN_HOOK = 2u, HOW_SLEDS = 4u, HOW_UNRECORDED = 8u, HOW_LEVELS = 16u };

struct mute_entry {
    _Atomic uintptr_t fn;
    _Atomic uint64_t calls;             // estimated from samples
    _Atomic uint64_t unrecorded_calls;  // estimated from samples on threads that do not record
    _Atomic uint64_t near;              // exits of at least ct_mute_near_ticks
    _Atomic uint32_t state;
    _Atomic uint32_t how;
    _Atomic uint32_t lost_sites;        // more sites than slots
    _Atomic uint32_t tail_seen;         // an exit hook was tail-called (gcc, void functions)
    _Atomic uint32_t tail_strays;       // tail-called exit hooks run after muting
    _Atomic uint32_t keep_timed;        // a call came near the threshold through work beneath it
    _Atomic uint64_t recheck_calls;     // a call of it was open beneath a sample: look again at this count
    _Atomic uint32_t exits_muted;       // its exit hooks are patched (or skipped) too: no call of it was open
    _Atomic uint32_t in_hook_exits;     // the in-hook check skips its exits too (set on the same terms)
    _Atomic uint32_t excluded;          // CALLTRACE_FILTER excluded it (ct_mute_exclude): no MUTED record
    _Atomic uint32_t sled_number;       // its number, for a function with sleds (0: none seen yet)
    _Atomic uintptr_t enter_ra[CT_MUTE_SITES], exit_ra[CT_MUTE_SITES];
    // The drain thread's own (no atomics needed).
    uint64_t muted_tick, muted_calls;
    uint32_t sites_patched, how_written, sites_written, level_written;
    uint32_t done;                      // learned sites dealt with: bit i enter_ra[i], bit 8 + i exit_ra[i]
    bool tails_done;
    bool open;                          // the last look found a call of it open on some thread
    uint64_t fence;                     // its entry was marked muted before barrier number `fence` (see barriers)
    uint32_t written_trace;             // trace_number when its last MUTED record was written (0: never)
};

static struct mute_entry table[CT_MUTE_SLOTS];
// Entries the drain thread has something to do for (a decision, a site learned after muting), one
// bit each, so that a tick never walks the whole table; and (the drain thread's own) the muted ones,
// whole or inside their recursion.
static _Atomic uint64_t work_bits[CT_MUTE_SLOTS / 64];
static _Atomic uint32_t work;           // bumped with each bit set: a tick with nothing new returns at once
static uint64_t muted_bits[CT_MUTE_SLOTS / 64];
// (The drain thread's own.) Muted functions whose exit sites wait until no call of theirs is open.
static uint64_t exit_wait_bits[CT_MUTE_SLOTS / 64];
static uint32_t exit_waiting;
// (The drain thread's own.) Barriers on every thread done since entries were first marked muted;
// a function's exits may go once `barriers` has reached its `fence`. `fence_wanted`: some entry
// was marked since the last barrier; `no_barrier`: the last one could not be made (no membarrier):
// the exits of the functions that wait for one stay, for good.
static uint64_t barriers;
static bool fence_wanted, no_barrier;
static uint32_t trace_number;           // the drain thread's count of traces it wrote to (a fork child's is new)
static _Atomic uint32_t any_muted;
static bool near_ready;

uint64_t ct_mute_near_ticks;            // 0 until ct_mute_keeps first runs: every exit goes there once
CT_TLS uint32_t ct_mute_countdown = 1;  // a new thread's first exit is a sample (and sets the period)
CT_TLS uint32_t ct_mute_stray_countdown = 1;
static CT_TLS uint32_t rng;
_Atomic uint32_t ct_mute_filter_on;
_Atomic uint64_t ct_mute_filter_bits[(1u << CT_MUTE_FILTER_BITS) / 64];
_Atomic uint64_t ct_mute_entry_bits[(1u << CT_MUTE_ENTRY_BITS) / 64];

CT_NO_INSTRUMENT static bool muting(void) {
    return ct_rt.settings.mute != CT_MUTE_OFF && ct_threshold_ticks != 0 && ct_threshold_ticks != UINT64_MAX;
}

// The header's mute_mode: 1 off (asked, or threshold 0), 2 auto (patching, in-hook where it
// cannot), 3 hook (in-hook only).
CT_NO_INSTRUMENT static uint32_t header_mode(void) {
    if (!muting()) return 1;
    return ct_rt.settings.mute == CT_MUTE_HOOK ? 3 : 2;
}

CT_NO_INSTRUMENT static struct mute_entry *lookup(uintptr_t fn, bool insert) {
    uint64_t h = ct_mute_hash(fn);
    for (uint32_t i = 0; i < CT_MUTE_PROBES; i++) {
        struct mute_entry *e = &table[(h + i) & (CT_MUTE_SLOTS - 1)];
        uintptr_t k = atomic_load_explicit(&e->fn, memory_order_acquire);
        if (k == fn) return e;
        if (k == 0) {
            if (!insert) return NULL;
            if (atomic_compare_exchange_strong_explicit(&e->fn, &k, fn, memory_order_acq_rel, memory_order_acquire) ||
                k == fn)
                return e;
        }
    }
    return NULL;
}

// Remembers a return address in one of `slots` (lock-free). True when it is new.
CT_NO_INSTRUMENT static bool learn(struct mute_entry *e, _Atomic uintptr_t *slots, uintptr_t ra) {
    for (int i = 0; i < CT_MUTE_SITES; i++) {
        uintptr_t v = atomic_load_explicit(&slots[i], memory_order_relaxed);
        if (v == ra) return false;
        if (v == 0) {
            if (atomic_compare_exchange_strong_explicit(&slots[i], &v, ra, memory_order_relaxed, memory_order_relaxed))
                return true;
            if (v == ra) return false;
        }
    }
    if (!atomic_load_explicit(&e->lost_sites, memory_order_relaxed)) {
        atomic_store_explicit(&e->lost_sites, 1, memory_order_relaxed);
        return true;
    }
    return false;
}

// The function tail-calls its exit hook somewhere: its tail jumps are searched for. True when new.
CT_NO_INSTRUMENT static bool note_tail(struct mute_entry *e) {
    // A load first: a tail exit may run it on every call, from every thread.
    return !atomic_load_explicit(&e->tail_seen, memory_order_relaxed) &&
           !atomic_exchange_explicit(&e->tail_seen, 1, memory_order_relaxed);
}

// The drain thread has something to do for `e`: mute it, or patch a site it learned since.
CT_NO_INSTRUMENT static void wake_for(struct mute_entry *e) {
    size_t i = (size_t)(e - table);
    atomic_fetch_or_explicit(&work_bits[i / 64], 1ull << (i % 64), memory_order_release);
    atomic_fetch_add_explicit(&work, 1, memory_order_release);
}

CT_NO_INSTRUMENT static uint32_t next_period(void) {
    uint32_t x = rng ? rng : (uint32_t)(uintptr_t)&rng | 1u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    rng = x;
    return 96 + (x & 63);
}

// The rule is met, but is a call of `fn` open on this thread beneath the one ending now? Then the
// function is recursive (directly, mutually, through a pointer) and its outer calls, whose time
// comes from the calls beneath them, are still running: they are the ones that may be slow, and
// muting now would hide their siblings still to come. The decision waits, and the next look comes
// after twice as many calls, so a deep stack is read a logarithmic number of times.
CT_NO_INSTRUMENT static bool open_beneath(struct mute_entry *e, uintptr_t fn, uint64_t calls) {
    const struct ct_thread *t = &ct_self;
    uint64_t depth = t->depth > t->cap ? t->cap : t->depth;
    for (uint64_t d = 0; d + 1 < depth; d++) {
        if (t->frames[d].fn == fn) {
            atomic_store_explicit(&e->recheck_calls, calls * 2, memory_order_relaxed);
            return true;
        }
    }
    return false;
}

CT_NO_INSTRUMENT void ct_mute_sample(uintptr_t fn, uintptr_t enter_ra, uintptr_t exit_ra, uintptr_t site, uint32_t number,
                                     uint64_t levels) {
    if (ct_rt.settings.mute == CT_MUTE_OFF || ct_threshold_ticks == 0) {
        ct_mute_countdown = UINT32_MAX; // never muting: about one more sample in 4 billion exits
        return;
    }
    // This exit stands for the ones since the last sample: the period that just ran out.
    static CT_TLS uint32_t period;
    uint32_t weight = period ? period : 1;
    period = next_period();
    ct_mute_countdown = period;
    // Not recording: the overhead calibration's own calls (ct_overhead.c), which must never be
    // muted (the runtime's code is never patched); the first of them run before the threshold is
    // known.
    if (!ct_self.recording || !muting()) return;
    struct mute_entry *e = lookup(fn, true);
    if (!e) return;
    uint64_t calls = atomic_fetch_add_explicit(&e->calls, weight, memory_order_relaxed) + weight;
    if (number) {
        if (!atomic_load_explicit(&e->sled_number, memory_order_relaxed))
            atomic_store_explicit(&e->sled_number, number, memory_order_relaxed);
        ct_mute_levels_note(number, levels, weight, false, false);
    }
    uint32_t state = atomic_load_explicit(&e->state, memory_order_acquire);
    bool fresh = learn(e, e->enter_ra, enter_ra);
    if (exit_ra != site) fresh |= learn(e, e->exit_ra, exit_ra);
    else if (!atomic_load_explicit(&e->tail_seen, memory_order_relaxed)) fresh |= note_tail(e);
    if (state == STATE_MUTED) {
        if (fresh) wake_for(e);
        return;
    }
    if (state != STATE_NONE || calls < CT_MUTE_MIN_CALLS ||
        calls < atomic_load_explicit(&e->recheck_calls, memory_order_relaxed))
        return;
    uint64_t near = atomic_load_explicit(&e->near, memory_order_relaxed);
    bool rule = near * CT_MUTE_NEAR_RATIO <= calls && !atomic_load_explicit(&e->keep_timed, memory_order_relaxed);
    // A function with sleds is looked at even when its slow calls keep it timed: they may all be
    // the outer calls of a recursion, whose inner ones can stop being timed (ct_mute_levels.h).
    if (!rule && !number) return;
    bool open = open_beneath(e, fn, calls);
    if (rule && !open) {
        if (atomic_compare_exchange_strong_explicit(&e->state, &state, STATE_PENDING, memory_order_acq_rel,
                                                    memory_order_relaxed)) {
            wake_for(e);
            // Now, not at the drain thread's next pass: a hot function runs some 100,000 more times
            // per millisecond the drain thread may sleep (1-8 ms). One futex call per function muted.
            ct_ring_wake();
        }
        return;
    }
    // The next look after twice as many calls (open_beneath has set it when it found one).
    if (!open) atomic_store_explicit(&e->recheck_calls, calls * 2, memory_order_relaxed);
    if (number && ct_mute_levels_look(number, open)) wake_for(e); // its MUTED record, from the drain thread
}

// A sample on a thread that does not record: `weight` calls of `e` (0 for an exit's sample, which
// only teaches a site). Mutes `e` once unrecorded threads have made CT_MUTE_MIN_CALLS of them and no
// recording thread has run it (`seen_recording`).
CT_NO_INSTRUMENT static void passive_count(struct mute_entry *e, uint32_t weight, bool seen_recording, bool fresh) {
    uint32_t state = atomic_load_explicit(&e->state, memory_order_acquire);
    if (state == STATE_MUTED) {
        if (fresh) wake_for(e);
        return;
    }
    uint64_t calls = atomic_fetch_add_explicit(&e->unrecorded_calls, weight, memory_order_relaxed) + weight;
    if (seen_recording || state != STATE_NONE || calls < CT_MUTE_MIN_CALLS ||
        atomic_load_explicit(&e->keep_timed, memory_order_relaxed))
        return;
    atomic_fetch_or_explicit(&e->how, HOW_UNRECORDED, memory_order_relaxed);
    if (atomic_compare_exchange_strong_explicit(&e->state, &state, STATE_PENDING, memory_order_acq_rel,
                                                memory_order_relaxed)) {
        wake_for(e);
        ct_ring_wake();
    }
}

// The period that just ran out on this thread, and the next one.
CT_NO_INSTRUMENT static uint32_t passive_period(void) {
    static CT_TLS uint32_t period;
    uint32_t weight = period ? period : 1;
    period = next_period();
    ct_mute_countdown = period;
    return weight;
}

CT_NO_INSTRUMENT void ct_mute_passive_sample(uintptr_t fn, bool seen_recording) {
    uint32_t weight = passive_period();
    struct mute_entry *e = muting() ? lookup(fn, true) : NULL;
    if (e) passive_count(e, weight, seen_recording, false);
}

CT_NO_INSTRUMENT void ct_mute_passive_hook_sample(uintptr_t fn, bool exit, uintptr_t ra, uintptr_t site) {
    uint32_t weight = passive_period();
    struct mute_entry *e = muting() ? lookup(fn, true) : NULL;
    if (!e) return;
    bool fresh = !exit ? learn(e, e->enter_ra, ra) : ra == site ? note_tail(e) : learn(e, e->exit_ra, ra);
    passive_count(e, exit ? 0 : weight, atomic_load_explicit(&e->calls, memory_order_relaxed) != 0, fresh);
}

CT_NO_INSTRUMENT static bool is_muted(const struct mute_entry *e) {
    return e && atomic_load_explicit(&e->state, memory_order_acquire) == STATE_MUTED;
}

CT_NO_INSTRUMENT bool ct_mute_keeps(uintptr_t fn, uint64_t duration, uint64_t descendants, uint64_t levels) {
    if (CT_UNLIKELY(!near_ready) && ct_threshold_ticks != UINT64_MAX) {
        // The first exit that gets here once the threshold is known (every exit does, while the
        // bound is 0) sets the bound.
        ct_mute_near_ticks = muting() ? ct_threshold_ticks / 10 : ct_threshold_ticks;
        near_ready = true;
    }
    bool slow = duration >= ct_threshold_ticks;
    if (!muting()) return slow;
    struct mute_entry *e = lookup(fn, true);
    if (e) {
        atomic_fetch_add_explicit(&e->near, 1, memory_order_relaxed);
        // Its time came from work beneath it, not from a moment off the CPU: never an outlier.
        if (descendants >= CT_MUTE_WORK_CALLS && !atomic_load_explicit(&e->keep_timed, memory_order_relaxed))
            atomic_store_explicit(&e->keep_timed, 1, memory_order_relaxed);
        uint32_t number = atomic_load_explicit(&e->sled_number, memory_order_relaxed);
        if (number) ct_mute_levels_note(number, levels, 0, true, descendants >= CT_MUTE_WORK_CALLS);
    }
    // A call whose frame was pushed is recorded, muted or not: it began before the muting, and
    // its exit hook was kept until it ended (see the drain thread's part below).
    return slow;
}

CT_NO_INSTRUMENT void ct_mute_stray_exit(uintptr_t fn, uintptr_t exit_ra, uintptr_t site) {
    if (!atomic_load_explicit(&any_muted, memory_order_relaxed)) return;
    struct mute_entry *e = lookup(fn, false);
    if (!is_muted(e)) return;
    if (exit_ra != site) {
        if (learn(e, e->exit_ra, exit_ra)) wake_for(e);
        return;
    }
    // A tail jump to the exit hook that was not found or not patched. While the exits wait for
    // the open calls to end every one runs; once they are patched, a few are expected (a call that
    // was in its epilogue then), thousands mean one was missed.
    if (note_tail(e) ||
        (atomic_load_explicit(&e->exits_muted, memory_order_acquire) &&
         atomic_fetch_add_explicit(&e->tail_strays, 1, memory_order_relaxed) + 1 == CT_MUTE_TAIL_STRAYS))
        wake_for(e);
}

CT_NO_INSTRUMENT bool ct_mute_is_muted(uintptr_t fn) {
    return atomic_load_explicit(&any_muted, memory_order_relaxed) && is_muted(lookup(fn, false));
}

CT_NO_INSTRUMENT bool ct_mute_entry_muted(uintptr_t fn, uintptr_t enter_ra) {
    atomic_thread_fence(memory_order_acquire); // after the bit: the state it was set after
    struct mute_entry *e = lookup(fn, false);
    if (!is_muted(e)) return false;
    if (learn(e, e->enter_ra, enter_ra)) wake_for(e);
    return true;
}

CT_NO_INSTRUMENT bool ct_mute_exit_lost(uintptr_t fn) {
    if (!atomic_load_explicit(&any_muted, memory_order_relaxed)) return false;
    const struct mute_entry *e = lookup(fn, false);
    return is_muted(e) && atomic_load_explicit(&e->exits_muted, memory_order_acquire);
}

CT_NO_INSTRUMENT bool ct_mute_filtered(uintptr_t fn, bool exit, uintptr_t caller_sp, uintptr_t site) {
    struct mute_entry *e = lookup(fn, false);
    if (!is_muted(e) || !(atomic_load_explicit(&e->how, memory_order_acquire) & HOW_IN_HOOK) ||
        (exit && !atomic_load_explicit(&e->in_hook_exits, memory_order_acquire)))
        return false;
    // An excluded function's call (CALLTRACE_FILTER): its site is learned here, as a sample teaches
    // a muted function's, and the drain thread's next pass patches it (verified, like any site).
    // Exactly the sites that pass this function, gcc's inlined copies too.
    if (CT_UNLIKELY(atomic_load_explicit(&e->excluded, memory_order_relaxed))) {
        uintptr_t ra = ((const uintptr_t *)caller_sp)[-1];
        if (!exit ? learn(e, e->enter_ra, ra) : ra == site ? note_tail(e) : learn(e, e->exit_ra, ra)) wake_for(e);
    }
    return true;
}

// ---- The drain thread's part -------------------------------------------------------------------

// The level from which a function not muted whole is not timed inside its own calls (0: none).
CT_NO_INSTRUMENT static uint32_t level_cap(const struct mute_entry *e) {
    if (atomic_load_explicit(&e->state, memory_order_acquire) != STATE_NONE) return 0;
    return ct_mute_levels_cap(atomic_load_explicit(&e->sled_number, memory_order_relaxed));
}

// Writes the MUTED record (again when `how`, the sites patched or the level changed) into the
// metadata stream. A function muted inside its recursion only (ct_mute_levels.h) has `how` bit 4
// and the level after its sites.
CT_NO_INSTRUMENT static void write_record(struct mute_entry *e) {
    uint32_t how = atomic_load_explicit(&e->how, memory_order_relaxed);
    uint32_t level = level_cap(e);
    struct ct_body b = { 0 };
    ct_body_varint(&b, atomic_load_explicit(&e->fn, memory_order_relaxed));
    ct_body_varint(&b, e->muted_tick);
    ct_body_varint(&b, e->muted_calls);
    ct_body_varint(&b, level ? how | HOW_LEVELS : how);
    ct_body_varint(&b, e->sites_patched);
    if (level) ct_body_varint(&b, level);
    ct_meta_write(CT_REC_MUTED, &b);
    e->how_written = how;
    e->sites_written = e->sites_patched;
    e->level_written = level;
    e->written_trace = trace_number;
}

CT_NO_INSTRUMENT static void use_in_hook_check(struct mute_entry *e) {
    if (atomic_fetch_or_explicit(&e->how, HOW_IN_HOOK, memory_order_release) & HOW_IN_HOOK) return;
    uint64_t h = ct_mute_hash(atomic_load_explicit(&e->fn, memory_order_relaxed)) & ((1u << CT_MUTE_FILTER_BITS) - 1);
    atomic_fetch_or_explicit(&ct_mute_filter_bits[h >> 6], 1ull << (h & 63), memory_order_release);
    atomic_fetch_or_explicit(&ct_mute_filter_on, CT_SKIP_MUTED, memory_order_release);
}

// Marks `e`'s entry muted for the entry handlers (its state is MUTED already): an entry handler
// that publishes a frame of it from now on takes it back (ct_mute.h, ct_sled_table.h).
CT_NO_INSTRUMENT static void mark_entry_muted(struct mute_entry *e) {
    uintptr_t fn = atomic_load_explicit(&e->fn, memory_order_relaxed);
    uint64_t h = ct_mute_hash(fn) & ((1u << CT_MUTE_ENTRY_BITS) - 1);
    atomic_fetch_or_explicit(&ct_mute_entry_bits[h >> 6], 1ull << (h & 63), memory_order_release);
    ct_sled_table_mute_entry(fn);
}

// (The drain thread's.) `e`'s exits wait for the next barrier as well as for its open calls.
CT_NO_INSTRUMENT static void wait_for_barrier(struct mute_entry *e) {
    e->fence = barriers + 1;
    fence_wanted = true;
}

// A barrier on every thread of the process (one that also serialises their instruction streams
// when `code` changed): a frame an entry handler published before it is seen by the look for open
// calls that follows, and one published after it is taken back, its function's mark being seen.
CT_NO_INSTRUMENT static void fence(bool code) {
    if ((code && ct_runtime_sync_cores()) || ct_runtime_barrier()) {
        barriers++;
        fence_wanted = false;
        no_barrier = false;
    } else {
        no_barrier = true;
    }
}

CT_NO_INSTRUMENT size_t ct_mute_exclude(const uintptr_t *fns, size_t n, bool late) {
    size_t taken = 0;
    bool sleds = false;
    ct_patch_hold_code();
    for (size_t i = 0; i < n; i++) {
        struct mute_entry *e = lookup(fns[i], true);
        if (!e) continue;
        atomic_store_explicit(&e->excluded, 1, memory_order_relaxed);
        atomic_store_explicit(&e->keep_timed, 1, memory_order_relaxed);
        // At open no call of it is open, nor will be: its exits are skipped from the start too.
        // Later, its calls may be: they end through their exit hooks (drain_pass lets them go).
        if (!late) atomic_store_explicit(&e->in_hook_exits, 1, memory_order_relaxed);
        atomic_store_explicit(&e->state, STATE_MUTED, memory_order_release);
        mark_entry_muted(e);
        // A function with sleds has them patched out now, entry and (at open) exits alike. The
        // in-hook check only where that cannot be done.
        unsigned kinds = late ? CT_SLED_ENTRY_BIT : CT_SLED_ENTRY_BIT | CT_SLED_EXIT_BITS;
        int out = ct_sled_table_has(fns[i]) ? ct_sled_table_set(fns[i], kinds, false) : -1;
        if (out >= 0) {
            atomic_fetch_or_explicit(&e->how, HOW_PATCHED, memory_order_release);
            if (!late) atomic_store_explicit(&e->exits_muted, 1, memory_order_release);
            sleds |= out > 0;
        } else {
            use_in_hook_check(e);
        }
        if (late) {
            wait_for_barrier(e);
            wake_for(e); // the mute pass sets its exits waiting
        }
        taken++;
    }
    ct_patch_release_code();
    if (sleds) ct_runtime_sync_cores();
    if (taken) atomic_store_explicit(&any_muted, 1, memory_order_release);
    return taken;
}

CT_NO_INSTRUMENT static void tally(struct mute_entry *e, enum ct_patch_result r, bool *patched, bool *fallback) {
    if (r == CT_PATCHED) {
        e->sites_patched++;
        *patched = true;
    } else if (r != CT_PATCH_ALREADY) {
        *fallback = true;
    }
}

// Verifies and patches `e`'s learned sites of one kind (pass 0: enter, 1: exit) not dealt with yet.
// A patched site no longer reads as a call: each is verified and patched once.
CT_NO_INSTRUMENT static bool patch_learned(struct mute_entry *e, const struct ct_maps *maps, int kind, bool *fallback) {
    bool patched = false;
    _Atomic uintptr_t *ras = kind == 0 ? e->enter_ra : e->exit_ra;
    for (int i = 0; i < CT_MUTE_SITES; i++) {
        uintptr_t ra = atomic_load_explicit(&ras[i], memory_order_relaxed);
        uint32_t bit = 1u << (kind * 8 + i);
        if (ra == 0 || (e->done & bit)) continue;
        e->done |= bit;
        uintptr_t site = ct_patch_call_before(maps, ra, kind == 0);
        tally(e, site ? ct_patch_site(maps, site, kind == 0 ? CT_SITE_ENTER_CALL : CT_SITE_EXIT_CALL)
                      : CT_PATCH_UNVERIFIED, &patched, fallback);
    }
    return patched;
}

// Does `e` have exit hooks still to take out: learned exit sites not dealt with, tail jumps not
// searched for, or the in-hook check not yet applied to exits?
CT_NO_INSTRUMENT static bool exits_pending(const struct mute_entry *e) {
    for (int i = 0; i < CT_MUTE_SITES; i++) {
        if (atomic_load_explicit(&e->exit_ra[i], memory_order_relaxed) && !(e->done & (1u << (8 + i)))) return true;
    }
    uint32_t how = atomic_load_explicit(&e->how, memory_order_relaxed);
    return (!e->tails_done && atomic_load_explicit(&e->tail_seen, memory_order_relaxed)) ||
           !atomic_load_explicit(&e->exits_muted, memory_order_relaxed) ||
           // The in-hook check turned on after the exits went (a site learned late could not be
           // patched): its exits are skipped once no call is open again, not at once.
           ((how & HOW_IN_HOOK) && !atomic_load_explicit(&e->in_hook_exits, memory_order_relaxed)) ||
           // Tail exits still running by the thousand: one was missed; the in-hook check then.
           (!(how & HOW_IN_HOOK) && atomic_load_explicit(&e->tail_strays, memory_order_relaxed) >= CT_MUTE_TAIL_STRAYS);
}

// A function with sleds (ct_sled_table.h) has no sites to learn: its sleds of `kinds` are patched
// out. True when some were; a store refused sets *fallback.
CT_NO_INSTRUMENT static bool patch_sleds(struct mute_entry *e, unsigned kinds, bool *fallback) {
    int n = ct_sled_table_set(atomic_load_explicit(&e->fn, memory_order_relaxed), kinds, false);
    if (n < 0) *fallback = true;
    if (n > 0) {
        e->sites_patched += (uint32_t)n;
        atomic_fetch_or_explicit(&e->how, HOW_SLEDS, memory_order_release);
    }
    return n > 0;
}

// Enter sites: patched at once (where one cannot be, or more sites exist than the entry keeps, the
// in-hook check covers the rest), so no new call of the function is timed.
CT_NO_INSTRUMENT static bool patch_enters(struct mute_entry *e, const struct ct_maps *maps) {
    bool fallback = atomic_load_explicit(&e->lost_sites, memory_order_relaxed);
    bool patched = false;
    if (ct_rt.settings.mute == CT_MUTE_HOOK || !maps) fallback = true;
    else if (ct_sled_table_has(atomic_load_explicit(&e->fn, memory_order_relaxed)))
        patched = patch_sleds(e, CT_SLED_ENTRY_BIT, &fallback);
    else patched = patch_learned(e, maps, 0, &fallback);
    if (patched) atomic_fetch_or_explicit(&e->how, HOW_PATCHED, memory_order_release);
    if (fallback && !(atomic_load_explicit(&e->how, memory_order_relaxed) & HOW_IN_HOOK)) use_in_hook_check(e);
    return patched;
}

// Exit sites and tail jumps, once no call of the function is open on any thread (looked at after
// the barrier that followed its entry's muting, so that no entry handler begun before can still
// push a frame of it that stays): every call that was running when its function was muted has
// ended through its exit hook, timed to its real end. Tail jumps are searched for only where one
// was seen to run: a search is only as sure as its bytes, so it is made only for functions known
// to have one (and found none: the in-hook check).
CT_NO_INSTRUMENT static bool patch_exits(struct mute_entry *e, const struct ct_maps *maps) {
    bool fallback = atomic_load_explicit(&e->tail_strays, memory_order_relaxed) >= CT_MUTE_TAIL_STRAYS;
    bool patched = false;
    if (ct_rt.settings.mute == CT_MUTE_HOOK || !maps) {
        fallback = true;
    } else if (ct_sled_table_has(atomic_load_explicit(&e->fn, memory_order_relaxed))) {
        patched = patch_sleds(e, CT_SLED_EXIT_BITS, &fallback); // its returns and its tail calls
    } else {
        patched = patch_learned(e, maps, 1, &fallback);
        if (!e->tails_done && atomic_load_explicit(&e->tail_seen, memory_order_relaxed)) {
            uintptr_t tails[CT_MUTE_TAILS];
            int n = ct_patch_find_tail_jumps(maps, atomic_load_explicit(&e->fn, memory_order_relaxed), tails, CT_MUTE_TAILS);
            for (int i = 0; i < n; i++) tally(e, ct_patch_site(maps, tails[i], CT_SITE_EXIT_TAIL), &patched, &fallback);
            if (n == 0) fallback = true;
            e->tails_done = true;
        }
    }
    if (patched) atomic_fetch_or_explicit(&e->how, HOW_PATCHED, memory_order_release);
    if (fallback) use_in_hook_check(e);
    if (atomic_load_explicit(&e->how, memory_order_relaxed) & HOW_IN_HOOK)
        atomic_store_explicit(&e->in_hook_exits, 1, memory_order_release);
    atomic_store_explicit(&e->exits_muted, 1, memory_order_release);
    return patched;
}

CT_NO_INSTRUMENT static void wait_for_exits(struct mute_entry *e) {
    size_t i = (size_t)(e - table);
    if (exit_wait_bits[i / 64] & (1ull << (i % 64))) return;
    exit_wait_bits[i / 64] |= 1ull << (i % 64);
    exit_waiting++;
}

CT_NO_INSTRUMENT static void mark_open(uintptr_t fn, void *context) {
    (void)context;
    struct mute_entry *e = lookup(fn, false);
    if (e) e->open = true;
}

// Which waiting functions have a call open on some thread (all of them, when a thread could not
// be looked at).
CT_NO_INSTRUMENT static void look_for_open_calls(void) {
    for (uint32_t w = 0; w < CT_MUTE_SLOTS / 64; w++) {
        for (uint64_t b = exit_wait_bits[w]; b; b &= b - 1) table[w * 64 + (uint32_t)__builtin_ctzll(b)].open = false;
    }
    if (ct_open_frames_visit(mark_open, NULL)) return;
    for (uint32_t w = 0; w < CT_MUTE_SLOTS / 64; w++) {
        for (uint64_t b = exit_wait_bits[w]; b; b &= b - 1) table[w * 64 + (uint32_t)__builtin_ctzll(b)].open = true;
    }
}

CT_NO_INSTRUMENT static uint64_t next_due_ns(void) {
    // A function whose exit hooks wait costs an out-of-line return per call meanwhile, which no
    // frame counts for compensation: look again as soon as the drain thread may.
    return exit_waiting ? ct_monotonic_ns() : 0;
}

CT_NO_INSTRUMENT static void count_in_header(uint64_t muted) {
    struct ct_file_header *h = ct_header_get();
    if (!h) return;
    h->mute_mode = header_mode();
    atomic_store_explicit(&h->muted_count, (uint32_t)muted, memory_order_relaxed);
}

// The snapshot of the maps and the code lock, taken for a batch once it has something to patch.
struct batch {
    struct ct_maps *maps;
    bool held, patched;
};

CT_NO_INSTRUMENT static const struct ct_maps *batch_maps(struct batch *b) {
    if (!b->held) {
        ct_patch_hold_code(); // until the batch ends: no dlclose meanwhile
        b->held = true;
        b->maps = ct_maps_read();
    }
    return b->maps;
}

CT_NO_INSTRUMENT static void write_if_changed(struct mute_entry *e) {
    if (atomic_load_explicit(&e->excluded, memory_order_relaxed)) return; // the FILTER record names it
    if (atomic_load_explicit(&e->how, memory_order_relaxed) != e->how_written ||
        e->sites_patched != e->sites_written || level_cap(e) != e->level_written || e->written_trace != trace_number)
        write_record(e);
}

CT_NO_INSTRUMENT static void drain_pass(void) {
    // A new trace (at start, or a fork child's: its header may be mapped where its parent's was,
    // hence the pid) gets the mode and, again, the records of the functions muted so far: the
    // child runs the same patched code.
    static struct ct_file_header *written_for;
    static uint64_t written_pid;
    static uint32_t seen = UINT32_MAX;
    static uint64_t muted;
    struct ct_file_header *h = ct_header_get();
    if (!h) return;
    // The code barrier is registered at start-up, while that is cheap (ct_runtime.c). Where it was
    // not (a runtime set up after the program started threads), at the first pass, before any
    // function is due, while the calls are still timed (and their hooks taken out of the costs),
    // rather than in the first muting's batch, while its exits wait and cost untimed time.
    if (muting()) ct_runtime_prepare_sync_cores();
    bool new_trace = h != written_for || h->pid != written_pid;
    uint32_t now_work = atomic_load_explicit(&work, memory_order_acquire);
    if (!new_trace && now_work == seen && exit_waiting == 0) return;
    seen = now_work;
    written_for = h;
    written_pid = h->pid;
    if (new_trace) trace_number++;
    struct batch b = { 0 };
    // Functions due: muted, their enter sites patched, their exits set waiting.
    for (uint32_t w = 0; w < CT_MUTE_SLOTS / 64; w++) {
        uint64_t bits = atomic_exchange_explicit(&work_bits[w], 0, memory_order_acquire);
        for (; bits; bits &= bits - 1) {
            uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(bits);
            struct mute_entry *e = &table[i];
            uint32_t state = atomic_load_explicit(&e->state, memory_order_acquire);
            bool counted = muted_bits[w] & (1ull << (i % 64));
            if (state == STATE_NONE) {
                // Muted inside its recursion (ct_mute_levels.h), or deeper than before: nothing to
                // patch, its record to write. It counts as muted.
                if (!level_cap(e)) continue;
                e->muted_calls = atomic_load_explicit(&e->calls, memory_order_relaxed);
                e->muted_tick = ct_now();
                if (!counted) {
                    muted_bits[w] |= 1ull << (i % 64);
                    muted++;
                }
                write_if_changed(e);
                continue;
            }
            const struct ct_maps *maps = batch_maps(&b);
            if (state == STATE_PENDING) {
                e->muted_calls = atomic_load_explicit(&e->calls, memory_order_relaxed) +
                                 atomic_load_explicit(&e->unrecorded_calls, memory_order_relaxed);
                atomic_store_explicit(&e->state, STATE_MUTED, memory_order_release);
                atomic_store_explicit(&any_muted, 1, memory_order_release);
                muted_bits[w] |= 1ull << (i % 64);
                if (!counted) muted++;
                // Its moment: once no thread runs the old enter sites any more, and every entry
                // handler running then has either published its frame or will see the mark.
                mark_entry_muted(e);
                wait_for_barrier(e);
                fence(patch_enters(e, maps));
                e->muted_tick = ct_now();
            } else {
                b.patched |= patch_enters(e, maps); // sites learned since
            }
            if (exits_pending(e)) wait_for_exits(e);
            write_if_changed(e);
        }
    }
    // Sites learned since, and entries marked by the filter's pass (ct_mute_exclude).
    if (b.patched || fence_wanted) fence(b.patched);
    b.patched = false;
    // Exits whose function has no call open any more, looked for after the barrier that followed
    // the marking of its entry: a frame published before that barrier is seen, none can appear after.
    if (exit_waiting) {
        look_for_open_calls();
        for (uint32_t w = 0; w < CT_MUTE_SLOTS / 64; w++) {
            for (uint64_t m = exit_wait_bits[w]; m; m &= m - 1) {
                uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(m);
                struct mute_entry *e = &table[i];
                if (e->open) continue;
                if (e->fence <= barriers) b.patched |= patch_exits(e, batch_maps(&b));
                // Without a barrier no look can be sure: its exits stay, for good (each costs an
                // out-of-line return); a later pass may set it waiting again (a site learned).
                else if (!no_barrier) continue;
                exit_wait_bits[w] &= ~(1ull << (i % 64));
                exit_waiting--;
                write_if_changed(e);
            }
        }
    }
    // A new trace gets every muted function's record again.
    for (uint32_t w = 0; new_trace && w < CT_MUTE_SLOTS / 64; w++) {
        for (uint64_t m = muted_bits[w]; m; m &= m - 1) {
            struct mute_entry *e = &table[w * 64 + (uint32_t)__builtin_ctzll(m)];
            if (e->written_trace != trace_number) write_record(e);
        }
    }
    if (b.patched) ct_runtime_sync_cores();
    ct_maps_free(b.maps);
    if (b.held) ct_patch_release_code();
    count_in_header(muted);
}

CT_NO_INSTRUMENT static void after_fork(void) {
    ct_patch_after_fork();
    ct_sled_table_after_fork();
}

const struct ct_feature ct_mute_feature = {
    .name = "mute",
    .pass = drain_pass,
    .next_due_ns = next_due_ns,
    .after_fork = after_fork,
};
