#include "ct_stream.h"
#include "ct_header.h"
#include "ct_ring.h"

// A retired block with less room than this is sealed rather than passed on.
#define CT_SPARE_MIN_ROOM 1024u

CT_NO_INSTRUMENT void ct_stream_seal(struct ct_stream *s) { ct_cursor_seal(&s->cursor); }

CT_NO_INSTRUMENT void ct_stream_retire(struct ct_stream *s) {
    struct ct_block_header *b = s->cursor.block;
    if (b && ct_cursor_room(&s->cursor) >= CT_SPARE_MIN_ROOM && ct_ring_leave_spare(b)) ct_cursor_detach(&s->cursor);
    else ct_cursor_seal(&s->cursor);
}

CT_NO_INSTRUMENT static void reset_deltas(struct ct_stream *s) {
    s->prev_fn = s->prev_site = s->prev_end = s->prev_depth = 0;
}

// Moves the stream on: a spare block another thread left (first a SEGMENT record saying the rest
// is ours), else a fresh block from the ring.
CT_NO_INSTRUMENT static bool next_block(struct ct_stream *s) {
    struct ct_block_header *spare = ct_ring_take_spare();
    if (spare) {
        uint8_t body[30], *q = body;
        q = ct_put_varint(q, s->id);
        q = ct_put_varint(q, s->tid);
        q = ct_put_varint(q, s->seq);
        ct_stream_seal(s);
        ct_cursor_resume(&s->cursor, spare, ct_ring_block_size());
        if (ct_cursor_put_sized(&s->cursor, CT_REC_SEGMENT, body, (size_t)(q - body)) &&
            ct_cursor_room(&s->cursor) >= CT_CALL_MAX_BYTES) {
            s->seq++;
            reset_deltas(s);
            return true;
        }
        ct_stream_seal(s);
    }
    struct ct_block_header *b = ct_ring_take();
    if (!b) return false;
    ct_stream_seal(s);
    ct_cursor_start(&s->cursor, b, ct_ring_block_size(), s->id, s->tid, s->seq++);
    reset_deltas(s);
    return true;
}

CT_NO_INSTRUMENT enum ct_write_result ct_stream_write_call_owned(struct ct_stream *s, uintptr_t fn,
                                                                 uintptr_t site, uint64_t start,
                                                                 uint64_t duration, uint64_t depth,
                                                                 unsigned flags) {
    if (CT_UNLIKELY(ct_cursor_room(&s->cursor) < CT_CALL_MAX_BYTES) && !next_block(s)) {
        ct_header_drop(ct_ring_starved_reason());
        return CT_DROPPED_FULL;
    }
    uint8_t *p = s->cursor.payload + s->cursor.used;
    uint8_t *q = p;
    *q++ = (uint8_t)(CT_REC_CALL | flags);
    q = ct_put_varint(q, ct_zigzag((uint64_t)fn - s->prev_fn));
    q = ct_put_varint(q, ct_zigzag((uint64_t)site - s->prev_site));
    q = ct_put_varint(q, ct_zigzag(start - s->prev_end));
    q = ct_put_varint(q, duration);
    q = ct_put_varint(q, ct_zigzag(depth - s->prev_depth));
    ct_cursor_commit(&s->cursor, (uint32_t)(q - p));
    s->prev_fn = fn;
    s->prev_site = site;
    s->prev_end = start + duration;
    s->prev_depth = depth;
    return CT_WRITTEN;
}

CT_NO_INSTRUMENT enum ct_write_result ct_stream_write_call(struct ct_stream *s, uintptr_t fn, uintptr_t site,
                                                           uint64_t start, uint64_t duration, uint64_t depth,
                                                           unsigned flags) {
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    // A write in progress. Our frame below it, or on another stack (a handler on an alternate
    // signal stack): we interrupted it, so drop rather than interleave bytes. Our frame at or
    // above it on the same stack: that writer's frame is gone (a handler longjmp'ed out of the
    // middle of its write), its bytes were never committed, and we take over. (A jump that stays
    // inside a handler proves nothing, so jumps are not counted here: until a write comes from
    // high enough, records are dropped, and counted, rather than risk writing twice into a block.)
    if (CT_UNLIKELY(s->busy_sp != 0)) {
        if (sp < s->busy_sp || sp < s->stack_lo || sp >= s->stack_hi) {
            struct ct_file_header *h = ct_header_get();
            if (h) atomic_fetch_add_explicit(&h->nested_drops, 1, memory_order_relaxed);
            return CT_DROPPED_NESTED;
        }
        // Taking over: the abandoned write may have committed its bytes without its delta state,
        // or the other way round, so go on in a fresh block, whose delta state starts at zero.
        ct_stream_seal(s);
    }
    atomic_signal_fence(memory_order_seq_cst);
    s->busy_sp = sp;
    // Only a compiler fence between the busy mark and the closed check: the thread that closes the
    // stream issues membarrier(), which puts a full barrier on this side (ct_thread.c).
    atomic_signal_fence(memory_order_seq_cst);
    enum ct_write_result result = CT_DROPPED_CLOSED;
    if (CT_LIKELY(!atomic_load_explicit(&s->closed, memory_order_relaxed)))
        result = ct_stream_write_call_owned(s, fn, site, start, duration, depth, flags);
    atomic_signal_fence(memory_order_seq_cst);
    s->busy_sp = 0;
    return result;
}
