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
                                                                 uint64_t duration, uint64_t descendants,
                                                                 uint64_t depth, unsigned flags) {
    if (CT_UNLIKELY(ct_cursor_room(&s->cursor) < CT_CALL_MAX_BYTES) && !next_block(s)) {
        ct_header_drop(ct_ring_starved_reason());
        return CT_DROPPED_FULL;
    }
    // The block and position are read once: a handler that takes the stream over while this
    // write is suspended moves the cursor, and then this record is not committed (see below).
    struct ct_block_header *b = s->cursor.block;
    uint32_t used = s->cursor.used;
    uint8_t *p = (uint8_t *)b + CT_BLOCK_HEADER_SIZE + used;
    uint8_t *q = p;
    if (descendants) flags |= CT_CALL_DESCENDANTS;
    *q++ = (uint8_t)(CT_REC_CALL | flags);
    q = ct_put_varint(q, ct_zigzag((uint64_t)fn - s->prev_fn));
    q = ct_put_varint(q, ct_zigzag((uint64_t)site - s->prev_site));
    q = ct_put_varint(q, ct_zigzag(start - s->prev_end));
    q = ct_put_varint(q, duration);
    q = ct_put_varint(q, ct_zigzag(depth - s->prev_depth));
    if (descendants) q = ct_put_varint(q, descendants);
    atomic_signal_fence(memory_order_seq_cst);
    if (CT_UNLIKELY(s->cursor.block != b)) {
        struct ct_file_header *h = ct_header_get();
        if (h) atomic_fetch_add_explicit(&h->nested_drops, 1, memory_order_relaxed);
        return CT_DROPPED_NESTED;
    }
    s->cursor.used = used + (uint32_t)(q - p);
    // Publish: the record's bytes happen-before the new `used` for any reader of the mapping.
    atomic_store_explicit(&b->used, s->cursor.used, memory_order_release);
    s->prev_fn = fn;
    s->prev_site = site;
    s->prev_end = start + duration;
    s->prev_depth = depth;
    return CT_WRITTEN;
}

CT_NO_INSTRUMENT enum ct_write_result ct_stream_write_call(struct ct_stream *s, uintptr_t fn, uintptr_t site,
                                                           uint64_t start, uint64_t duration, uint64_t descendants,
                                                           uint64_t depth, unsigned flags) {
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    // A write in progress, no jump since it started, and our frame below it: we are a signal
    // handler that interrupted it, so drop rather than interleave bytes. The same on another
    // stack (a handler on an alternate signal stack), jump or not. A jump since, or our frame
    // above it: that writer's frame is probably gone (a handler longjmp'ed out of the middle of
    // its write), and we take over, in a fresh block. "Probably": a jump that stayed inside the
    // handler leaves the writer alive, so the old block is only detached, never sealed (so never
    // unmapped under it), and the writer, when it resumes, commits only if its block is still the
    // stream's (ct_stream_write_call_owned): its record is lost, nothing is corrupted.
    if (CT_UNLIKELY(s->busy_sp != 0)) {
        if ((s->busy_jumps == s->jumps && sp < s->busy_sp) || sp < s->stack_lo || sp >= s->stack_hi) {
            struct ct_file_header *h = ct_header_get();
            if (h) atomic_fetch_add_explicit(&h->nested_drops, 1, memory_order_relaxed);
            return CT_DROPPED_NESTED;
        }
        ct_cursor_detach(&s->cursor);
    }
    s->busy_jumps = s->jumps;
    atomic_signal_fence(memory_order_seq_cst);
    s->busy_sp = sp;
    // Only a compiler fence between the busy mark and the closed check: the thread that closes the
    // stream issues membarrier(), which puts a full barrier on this side (ct_thread.c).
    atomic_signal_fence(memory_order_seq_cst);
    enum ct_write_result result = CT_DROPPED_CLOSED;
    if (CT_LIKELY(!atomic_load_explicit(&s->closed, memory_order_relaxed)))
        result = ct_stream_write_call_owned(s, fn, site, start, duration, descendants, depth, flags);
    atomic_signal_fence(memory_order_seq_cst);
    s->busy_sp = 0;
    return result;
}
