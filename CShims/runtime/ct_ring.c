// The ring's invariants. Slot i % capacity holds the i-th block published. The drain thread is the
// only writer of slots and `filled`; takers only advance `taken`. A slot is refilled only once
// taken > i, and a taker reads its slot before its CAS on `taken` succeeds, so a slot is never read
// while it is rewritten. `taken` and `filled` only grow (64-bit), so the CAS cannot suffer ABA.
#include "ct_ring.h"
#include "ct_runtime.h"
#include "ct_syscall.h"

#include <linux/futex.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CT_RING_MAX 256
#define CT_SPARE_MAX 16

static struct {
    uint32_t block_size, capacity;
    struct ct_block_header *slots[CT_RING_MAX];
    uint64_t offsets[CT_RING_MAX];
    _Atomic uint64_t filled, taken;
    _Atomic uint32_t wake;            // futex word: bumped to wake the drain thread
    _Atomic uint32_t wake_pending;    // a taker asked and the drain thread has not run since
    _Atomic uint32_t starved;         // CT_LOST_* bits while the drain thread cannot refill
    _Atomic uint32_t short_of;        // CT_LOST_* bits: why the last refill got fewer blocks than asked
    _Atomic(struct ct_block_header *) spare[CT_SPARE_MAX];
    _Atomic uint32_t first_pending;   // futex word: the first blocks are still to come (ct_ring_defer_first)
    _Atomic bool first_wanted;        // a stream of calls waits for them
} R;

// The drain thread's own takes never wait for blocks: it is the one that makes them. Blocks it
// put off making (ct_ring_never_wait_here) it makes at once when it finds the ring empty itself.
static _Thread_local bool never_wait;
static bool (*make_deferred)(void);

CT_NO_INSTRUMENT uint32_t ct_ring_block_size(void) { return R.block_size; }
CT_NO_INSTRUMENT uint32_t ct_ring_capacity(void) { return R.capacity; }

CT_NO_INSTRUMENT void ct_ring_wake(void) {
    atomic_fetch_add_explicit(&R.wake, 1, memory_order_release);
    // A filter on every thread forbids it (ct_restrict.h): the drain thread is gone anyway.
    if (CT_UNLIKELY(atomic_load_explicit(&ct_rt.no_calls, memory_order_relaxed))) return;
    ct_syscall(SYS_futex, &R.wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

CT_NO_INSTRUMENT static bool blocks_waiting(void) {
    return atomic_load_explicit(&R.filled, memory_order_acquire) > atomic_load_explicit(&R.taken, memory_order_relaxed);
}

// One syscall per shortage: the first taker to see it wakes the drain thread, the others see
// `wake_pending` set and go on (or drop) without a syscall.
// While the drain thread cannot get space (a full disk, RLIMIT_FSIZE) it retries on its own, slowly:
// asking again would only make both threads spin.
CT_NO_INSTRUMENT static void ask_for_blocks(void) {
    if (atomic_load_explicit(&R.starved, memory_order_relaxed)) return;
    if (atomic_exchange_explicit(&R.wake_pending, 1, memory_order_acq_rel) == 0) ct_ring_wake();
}

// The first taker after a deferred start asks for the first blocks and waits for them, as the
// opening thread used to wait for them at start-up (bounded the same way: a drain thread that does
// not answer in a second is a machine in trouble, and the record is dropped as the ring's).
// A drain thread that did not answer in that second gets no second chance: the wait is given up
// for every taker (they drop, counted), so a stuck drain thread costs the program one second once,
// not one per block. The spares, which come before the rest (ct_ring_spares_ready), end the wait
// too: the taker takes one of them.
CT_NO_INSTRUMENT static bool wait_for_first_blocks(void) {
    if (never_wait || !atomic_load_explicit(&R.first_pending, memory_order_acquire)) return false;
    atomic_store_explicit(&R.first_wanted, true, memory_order_release);
    ask_for_blocks();
    for (int i = 0; i < 50 && atomic_load_explicit(&R.first_pending, memory_order_acquire); i++) {
        if (blocks_waiting()) return true;
        struct timespec ts = { 0, 20 * 1000000 };
        ct_syscall(SYS_futex, &R.first_pending, FUTEX_WAIT_PRIVATE, 1, &ts, NULL, 0);
    }
    if (atomic_exchange_explicit(&R.first_pending, 0, memory_order_acq_rel))
        ct_syscall(SYS_futex, &R.first_pending, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
    return true;
}

CT_NO_INSTRUMENT void ct_ring_wait_for_first(void) {
    if (!blocks_waiting()) wait_for_first_blocks();
}

CT_NO_INSTRUMENT static struct ct_block_header *take(bool may_wait) {
    if (R.capacity == 0) return NULL;
    uint64_t t = atomic_load_explicit(&R.taken, memory_order_relaxed);
    for (bool waited = !may_wait;;) {
        uint64_t f = atomic_load_explicit(&R.filled, memory_order_acquire); // slots below f are written
        if (t >= f) {
            if (never_wait && make_deferred && make_deferred()) continue;
            if (!waited && (waited = wait_for_first_blocks())) continue;
            ask_for_blocks();
            return NULL;
        }
        struct ct_block_header *b = R.slots[t % R.capacity];
        if (atomic_compare_exchange_weak_explicit(&R.taken, &t, t + 1, memory_order_acq_rel,
                                                  memory_order_relaxed)) {
            if (f - (t + 1) <= R.capacity / 2) ask_for_blocks();
            return b;
        }
    }
}

CT_NO_INSTRUMENT struct ct_block_header *ct_ring_take(void) { return take(false); }

CT_NO_INSTRUMENT struct ct_block_header *ct_ring_take_for_calls(void) { return take(true); }

CT_NO_INSTRUMENT uint32_t ct_ring_starved_reason(void) {
    uint32_t r = atomic_load_explicit(&R.starved, memory_order_relaxed);
    return r ? r : CT_LOST_RING_EMPTY | atomic_load_explicit(&R.short_of, memory_order_relaxed);
}

CT_NO_INSTRUMENT void ct_ring_set_short(uint32_t reason) {
    if (atomic_load_explicit(&R.short_of, memory_order_relaxed) != reason)
        atomic_store_explicit(&R.short_of, reason, memory_order_relaxed);
}

CT_NO_INSTRUMENT bool ct_ring_leave_spare(struct ct_block_header *b) {
    for (int i = 0; i < CT_SPARE_MAX; i++) {
        struct ct_block_header *none = NULL;
        if (atomic_compare_exchange_strong_explicit(&R.spare[i], &none, b, memory_order_release,
                                                    memory_order_relaxed))
            return true;
    }
    return false;
}

CT_NO_INSTRUMENT struct ct_block_header *ct_ring_take_spare(void) {
    for (int i = 0; i < CT_SPARE_MAX; i++) {
        if (!atomic_load_explicit(&R.spare[i], memory_order_relaxed)) continue;
        // An exchange takes exactly what is there: two takers can never get the same block.
        struct ct_block_header *b = atomic_exchange_explicit(&R.spare[i], NULL, memory_order_acquire);
        if (b) return b;
    }
    return NULL;
}

CT_NO_INSTRUMENT void ct_ring_init(uint32_t block_size, uint32_t capacity) {
    memset(&R, 0, sizeof R);
    R.block_size = block_size;
    R.capacity = capacity > CT_RING_MAX ? CT_RING_MAX : capacity < 2 ? 2 : capacity;
}

CT_NO_INSTRUMENT void ct_ring_defer_first(void) { atomic_store_explicit(&R.first_pending, 1, memory_order_release); }

CT_NO_INSTRUMENT bool ct_ring_first_deferred(void) { return atomic_load_explicit(&R.first_pending, memory_order_acquire); }

CT_NO_INSTRUMENT void ct_ring_first_ready(void) {
    if (!atomic_exchange_explicit(&R.first_pending, 0, memory_order_acq_rel)) return;
    ct_syscall(SYS_futex, &R.first_pending, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

CT_NO_INSTRUMENT void ct_ring_spares_ready(void) {
    if (atomic_load_explicit(&R.first_pending, memory_order_acquire))
        ct_syscall(SYS_futex, &R.first_pending, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

CT_NO_INSTRUMENT void ct_ring_never_wait_here(bool (*make)(void)) {
    never_wait = true;
    make_deferred = make;
}

CT_NO_INSTRUMENT bool ct_ring_first_wanted(void) { return atomic_load_explicit(&R.first_wanted, memory_order_acquire); }

CT_NO_INSTRUMENT uint64_t ct_ring_published(void) { return atomic_load_explicit(&R.filled, memory_order_relaxed); }

CT_NO_INSTRUMENT void ct_ring_publish(struct ct_block_header *b, uint64_t offset) {
    uint64_t f = atomic_load_explicit(&R.filled, memory_order_relaxed);
    R.slots[f % R.capacity] = b;
    R.offsets[f % R.capacity] = offset;
    atomic_store_explicit(&R.filled, f + 1, memory_order_release); // publishes the slot
}

CT_NO_INSTRUMENT void ct_ring_set_starved(uint32_t reason) {
    atomic_store_explicit(&R.starved, reason, memory_order_relaxed);
    atomic_store_explicit(&R.wake_pending, 0, memory_order_release);
}

CT_NO_INSTRUMENT uint64_t ct_ring_taken_count(void) { return atomic_load_explicit(&R.taken, memory_order_acquire); }

CT_NO_INSTRUMENT struct ct_block_header *ct_ring_slot(uint64_t index, uint64_t *offset) {
    if (offset) *offset = R.offsets[index % R.capacity];
    return R.slots[index % R.capacity];
}

CT_NO_INSTRUMENT void ct_ring_claim_all(uint64_t *first, uint64_t *end) {
    uint64_t t = atomic_load_explicit(&R.taken, memory_order_relaxed);
    uint64_t f = atomic_load_explicit(&R.filled, memory_order_acquire);
    while (t < f && !atomic_compare_exchange_weak_explicit(&R.taken, &t, f, memory_order_acq_rel,
                                                           memory_order_relaxed)) {
        f = atomic_load_explicit(&R.filled, memory_order_acquire);
    }
    *first = t < f ? t : f;
    *end = f;
}

CT_NO_INSTRUMENT uint32_t ct_ring_wake_count(void) { return atomic_load_explicit(&R.wake, memory_order_acquire); }

CT_NO_INSTRUMENT bool ct_ring_is_starved(void) { return atomic_load_explicit(&R.starved, memory_order_relaxed) != 0; }

CT_NO_INSTRUMENT void ct_ring_wait(uint32_t seen, uint64_t timeout_ns) {
    if (atomic_load_explicit(&R.wake_pending, memory_order_acquire) && !ct_ring_is_starved()) return;
    struct timespec ts = { (time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u) };
    ct_syscall(SYS_futex, &R.wake, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
}

CT_NO_INSTRUMENT void ct_ring_forget(void) { memset(&R, 0, sizeof R); }
