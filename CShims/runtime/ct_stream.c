#include "ct_stream.h"
#include "ct_file.h"

#include <string.h>

CT_NO_INSTRUMENT static inline uint8_t *put_varint(uint8_t *p, uint64_t v) {
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

CT_NO_INSTRUMENT static inline uint64_t zigzag(uint64_t delta) {
    return (delta << 1) ^ (uint64_t)((int64_t)delta >> 63);
}

CT_NO_INSTRUMENT void ct_stream_seal(struct ct_stream *s) {
    if (s->block) atomic_fetch_or_explicit(&s->block->flags, CT_BLOCK_SEALED, memory_order_release);
    s->block = NULL;
    s->payload = NULL;
    s->capacity = s->used = 0;
}

// Moves the stream to a fresh block from the pool. The block header is filled in before anything
// is committed to it; a reader that finds the magic but used == 0 sees an empty block.
CT_NO_INSTRUMENT static bool next_block(struct ct_stream *s) {
    struct ct_block_header *b = ct_file_take_block();
    if (!b) return false;
    ct_stream_seal(s);
    memcpy(b->magic, "CTBK", 4);
    b->stream = s->id;
    b->tid = s->tid;
    b->seq = s->seq++;
    s->block = b;
    s->payload = (uint8_t *)b + CT_BLOCK_HEADER_SIZE;
    s->capacity = ct_file_header()->block_size - CT_BLOCK_HEADER_SIZE;
    s->used = 0;
    s->prev_fn = s->prev_site = s->prev_end = s->prev_depth = 0;
    return true;
}

CT_NO_INSTRUMENT enum ct_write_result ct_stream_write_call_owned(struct ct_stream *s, uintptr_t fn,
                                                                 uintptr_t site, uint64_t start,
                                                                 uint64_t duration, uint64_t depth,
                                                                 unsigned flags) {
    if (CT_UNLIKELY(s->capacity - s->used < CT_CALL_MAX_BYTES) && !next_block(s)) return CT_DROPPED_FULL;
    uint8_t *p = s->payload + s->used;
    uint8_t *q = p;
    *q++ = (uint8_t)(CT_REC_CALL | flags);
    q = put_varint(q, zigzag((uint64_t)fn - s->prev_fn));
    q = put_varint(q, zigzag((uint64_t)site - s->prev_site));
    q = put_varint(q, zigzag(start - s->prev_end));
    q = put_varint(q, duration);
    q = put_varint(q, zigzag(depth - s->prev_depth));
    s->used += (uint32_t)(q - p);
    // Publish: the record's bytes happen-before the new `used` for any reader of the mapping.
    atomic_store_explicit(&s->block->used, s->used, memory_order_release);
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
    // A write in progress, no jump since it started, and our frame below it (the stack grows down):
    // we are a signal handler that interrupted it, so drop rather than interleave bytes. A jump
    // since, or our frame above it: that writer's frame is gone (a handler longjmp'ed out of the
    // middle of its write); its bytes were never committed, so we take over.
    if (CT_UNLIKELY(s->busy_sp != 0)) {
        if (s->busy_jumps == s->jumps && sp < s->busy_sp) return CT_DROPPED_NESTED;
        // Taking over: the abandoned write may have committed its bytes without its delta state,
        // or the other way round, so go on in a fresh block, whose delta state starts at zero.
        ct_stream_seal(s);
    }
    s->busy_jumps = s->jumps;
    atomic_signal_fence(memory_order_seq_cst);
    s->busy_sp = sp;
    // Only a compiler fence between the busy mark and the closed check: the thread that closes the
    // stream issues membarrier(), which puts a full barrier on this side (ct_runtime.c).
    atomic_signal_fence(memory_order_seq_cst);
    enum ct_write_result result = CT_DROPPED_CLOSED;
    if (CT_LIKELY(!atomic_load_explicit(&s->closed, memory_order_relaxed)))
        result = ct_stream_write_call_owned(s, fn, site, start, duration, depth, flags);
    atomic_signal_fence(memory_order_seq_cst);
    s->busy_sp = 0;
    return result;
}
