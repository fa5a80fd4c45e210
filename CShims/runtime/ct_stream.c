#include "ct_stream.h"
#include "ct_clock.h"
#include "ct_header.h"
#include "ct_meta.h"
#include "ct_ring.h"

#include <string.h>

// A retired block with less room than this is sealed rather than passed on.
#define CT_SPARE_MIN_ROOM 1024u
// A THREAD record: tag, length, stream, tid and a name of at most 16 bytes.
#define CT_THREAD_MAX_BYTES (1u + 1u + 5u + 10u + 1u + 16u)

CT_NO_INSTRUMENT static void count_nested_drop(void) {
    struct ct_file_header *h = ct_header_get();
    if (h) atomic_fetch_add_explicit(&h->nested_drops, 1, memory_order_relaxed);
}

CT_NO_INSTRUMENT void ct_stream_seal(struct ct_stream *s) {
    for (int i = 0; i < CT_STREAM_LANES; i++)
        if (s->lanes[i].busy_sp == 0) ct_cursor_seal(&s->lanes[i].cursor);
}

CT_NO_INSTRUMENT void ct_stream_retire(struct ct_stream *s) {
    struct ct_lane *l = &s->lanes[s->lane];
    struct ct_block_header *b = l->cursor.block;
    if (l->busy_sp == 0 && b && ct_cursor_room(&l->cursor) >= CT_SPARE_MIN_ROOM && ct_ring_leave_spare(b))
        ct_cursor_detach(&l->cursor);
    ct_stream_seal(s);
}

CT_NO_INSTRUMENT bool ct_stream_wait_idle(struct ct_stream *s, uint64_t deadline_ns) {
    for (;;) {
        uint32_t lane = *(volatile uint32_t *)&s->lane;
        while (*(volatile uintptr_t *)&s->lanes[lane].busy_sp != 0)
            if (ct_monotonic_ns() > deadline_ns) return false;
        // A takeover may have moved the stream on meanwhile (its write then saw `closed`).
        if (*(volatile uint32_t *)&s->lane == lane) return true;
    }
}

CT_NO_INSTRUMENT static void reset_deltas(struct ct_lane *l) {
    l->prev_fn = l->prev_site = l->prev_end = l->prev_depth = 0;
}

// Moves the lane on: a spare block another thread left (first a SEGMENT record saying the rest
// is ours), else a fresh block from the ring. `seq` is taken with an atomic add: a handler's
// takeover may take one in the middle, and two pieces must never share one.
CT_NO_INSTRUMENT static bool next_block(struct ct_stream *s, struct ct_lane *l) {
    struct ct_block_header *spare = ct_ring_take_spare();
    if (spare) {
        uint64_t seq = atomic_fetch_add_explicit(&s->seq, 1, memory_order_relaxed);
        uint8_t body[30], *q = body;
        q = ct_put_varint(q, s->id);
        q = ct_put_varint(q, s->tid);
        q = ct_put_varint(q, seq);
        ct_cursor_seal(&l->cursor);
        ct_cursor_resume(&l->cursor, spare, ct_ring_block_size());
        if (ct_cursor_put_sized(&l->cursor, CT_REC_SEGMENT, body, (size_t)(q - body)) &&
            ct_cursor_room(&l->cursor) >= CT_CALL_MAX_BYTES) {
            reset_deltas(l);
            return true;
        }
        ct_cursor_seal(&l->cursor);  // too small for a record after its SEGMENT: an empty piece keeps the seq
    }
    struct ct_block_header *b = ct_ring_take_for_calls();
    if (!b) return false;
    ct_cursor_seal(&l->cursor);
    ct_cursor_start(&l->cursor, b, ct_ring_block_size(), s->id, s->tid,
                    atomic_fetch_add_explicit(&s->seq, 1, memory_order_relaxed));
    reset_deltas(l);
    return true;
}

// Writes a CALL record, or (`c` NULL) a THREAD record with the thread's `name`, into the held lane `l`.
CT_NO_INSTRUMENT static enum ct_write_result write_into(struct ct_stream *s, struct ct_lane *l,
                                                        const struct ct_call_record *c, const char *name) {
    if (CT_UNLIKELY(ct_cursor_room(&l->cursor) < (c ? CT_CALL_MAX_BYTES : CT_THREAD_MAX_BYTES)) && !next_block(s, l)) {
        ct_header_drop(ct_ring_starved_reason());
        return CT_DROPPED_FULL;
    }
    if (c) {
        ct_lane_put_call(l, c);
        return CT_WRITTEN;
    }
    size_t n = strnlen(name, 16);
    uint8_t body[CT_THREAD_MAX_BYTES], *q = body;
    q = ct_put_varint(q, s->id);
    q = ct_put_varint(q, s->tid);
    q = ct_put_varint(q, n);
    memcpy(q, name, n);
    q += n;
    ct_cursor_put_sized(&l->cursor, CT_REC_THREAD, body, (size_t)(q - body));
    return CT_WRITTEN;
}

CT_NO_INSTRUMENT enum ct_write_result ct_stream_write_call_owned(struct ct_stream *s, const struct ct_call_record *c) {
    return write_into(s, &s->lanes[s->lane], c, NULL);
}

// Is the holder of `l` certainly gone? Only a frame on this thread's own stack at or below ours can
// be judged: it was left, since ours is there. (A live holder is always deeper than anything that
// interrupted it.)
CT_NO_INSTRUMENT static bool holder_is_gone(const struct ct_stream *s, const struct ct_lane *l, uintptr_t sp) {
    // Without the stack's bounds (pthread_getattr_np failed) an alternate signal stack cannot be
    // told from it: nothing is judged gone then.
    if (s->stack_lo == 0 && s->stack_hi == UINTPTR_MAX) return false;
    uintptr_t held = l->busy_sp;
    return held >= s->stack_lo && held < s->stack_hi && sp >= s->stack_lo && sp < s->stack_hi && sp >= held;
}

// Frees the lanes other than `current` whose holders are certainly gone, seen from frame `sp`
// (their blocks only detached: "certainly gone" is worth no risk of an unmap under a writer).
// Clears `others_held` once no other lane is held.
CT_NO_INSTRUMENT static void free_dead_lanes(struct ct_stream *s, uint32_t current, uintptr_t sp) {
    bool held = false;
    for (uint32_t i = 0; i < CT_STREAM_LANES; i++) {
        struct ct_lane *l = &s->lanes[i];
        if (i == current || l->busy_sp == 0) continue;
        if (!holder_is_gone(s, l, sp)) {
            held = true;
            continue;
        }
        ct_cursor_detach(&l->cursor);
        atomic_signal_fence(memory_order_seq_cst);
        l->busy_sp = 0;
    }
    s->others_held = held;
}

// The current lane is held by a writer that may be dead or alive (see ct_stream.h): moves the
// stream to another lane, free or certainly left, and holds it. NULL when there is none.
CT_NO_INSTRUMENT static struct ct_lane *take_over(struct ct_stream *s, uint32_t current, uintptr_t sp) {
    for (uint32_t i = 1; i < CT_STREAM_LANES; i++) {
        uint32_t n = (current + i) % CT_STREAM_LANES;
        struct ct_lane *l = &s->lanes[n];
        bool gone = false;
        if (l->busy_sp != 0 && !(gone = holder_is_gone(s, l, sp))) continue;
        // A handler that interrupts between the test and the hold finds the lane as it was and
        // leaves it as it found it, done with it. Holding it first, then readying it, means no
        // handler ever sees it half ready.
        ct_lane_hold(s, l, sp);
        // Its last block: sealed if its writer finished it; only detached if that writer was left
        // by a jump mid-write (sealing lets the drain thread unmap a block, and "certainly gone"
        // is worth no risk). The lane starts a fresh block at its first record.
        if (gone) ct_cursor_detach(&l->cursor);
        else ct_cursor_seal(&l->cursor);
        atomic_signal_fence(memory_order_seq_cst);
        s->others_held = 1;  // the lane left behind stays held, by a live writer or a dead one
        s->lane = n;
        return l;
    }
    return NULL;
}

// ct_stream_write_call, and the name of ct_stream_name_at_end (`c` NULL): see write_into.
CT_NO_INSTRUMENT static enum ct_write_result write_record(struct ct_stream *s, const struct ct_call_record *c,
                                                          const char *name) {
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    struct ct_lane *l;
    for (;;) {
        uint32_t current = s->lane;
        l = &s->lanes[current];
        uint64_t jumps = s->jumps;
        atomic_signal_fence(memory_order_seq_cst);
        if (CT_LIKELY(l->busy_sp == 0)) {
            ct_lane_hold(s, l, sp);
            // A handler between reading `lane` and the hold may have moved the stream on (when
            // its own write was interrupted and taken over): then write where it went.
            if (CT_LIKELY(s->lane == current)) {
                // A handler between the test and the hold whose write a jump cut short (a nested
                // handler that longjmp'ed) left this lane's position or deltas mid-update: start a
                // fresh block. Detached, not sealed: the block stays mapped whatever it holds.
                if (CT_UNLIKELY(s->jumps != jumps)) ct_cursor_detach(&l->cursor);
                if (CT_UNLIKELY(s->others_held)) free_dead_lanes(s, current, sp);
                break;
            }
            l->busy_sp = 0;
            continue;
        }
        // Held: a write in progress, no jump since it started, and our frame below it: we are a
        // signal handler that interrupted it, so drop rather than interleave bytes. The same on
        // another stack (a handler on an alternate signal stack), jump or not. Otherwise the
        // holder may be gone (a handler longjmp'ed out of the middle of its write) or alive (the
        // jump stayed inside the handler): take the stream over into another lane.
        bool on_stack = sp >= s->stack_lo && sp < s->stack_hi;
        // Once another thread closes the stream (exit), nothing moves its lanes any more.
        if (atomic_load_explicit(&s->closed, memory_order_relaxed)) return CT_DROPPED_CLOSED;
        if ((l->busy_jumps == s->jumps && sp < l->busy_sp) || !on_stack || !(l = take_over(s, current, sp))) {
            count_nested_drop();
            return CT_DROPPED_NESTED;
        }
        break;
    }
    // Only a compiler fence between the hold and the closed check: the thread that closes the
    // stream issues membarrier(), which puts a full barrier on this side (ct_thread.c).
    enum ct_write_result result = CT_DROPPED_CLOSED;
    if (CT_LIKELY(!atomic_load_explicit(&s->closed, memory_order_relaxed)))
        result = write_into(s, l, c, name);
    atomic_signal_fence(memory_order_seq_cst);
    l->busy_sp = 0;
    return result;
}

CT_NO_INSTRUMENT enum ct_write_result ct_stream_write_call(struct ct_stream *s, const struct ct_call_record *c) {
    return write_record(s, c, NULL);
}

CT_NO_INSTRUMENT bool ct_stream_name_at_end(struct ct_stream *s) {
    struct ct_file_header *h = ct_header_get();
    if (!h || !h->limit) return false;
    // No piece: none of its calls is in the trace, and its name is not needed.
    if (atomic_load_explicit(&s->seq, memory_order_relaxed) == 0) return true;
    char name[17] = { 0 };
    if (ct_meta_read_thread_name(s->tid, name) > 0) write_record(s, NULL, name);
    return true;
}
