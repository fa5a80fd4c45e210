// The one record writer. Every record, the hot path's CALL and the metadata kinds alike, goes into
// a block through a ct_cursor: it knows the block layout (header, payload, the `used` commit) and
// the varint encoding, and nothing of threads, the ring or the file.
//
// Publishing: a record's bytes are written first, then `used` is release-stored, so a reader of
// the mapping (even a live one) never sees a record before its bytes.
#ifndef CT_WRITER_H
#define CT_WRITER_H

#include "ct_format.h"

struct ct_cursor {
    struct ct_block_header *block;   // NULL until the first block
    uint8_t *payload;
    uint32_t capacity, used;
};

CT_NO_INSTRUMENT static inline uint8_t *ct_put_varint(uint8_t *p, uint64_t v) {
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

CT_NO_INSTRUMENT static inline uint64_t ct_zigzag(uint64_t delta) {
    return (delta << 1) ^ (uint64_t)((int64_t)delta >> 63);
}

CT_NO_INSTRUMENT static inline uint32_t ct_cursor_room(const struct ct_cursor *c) {
    return c->block ? c->capacity - c->used : 0;
}

// Makes the `n` bytes just written at payload + used visible to readers.
CT_NO_INSTRUMENT static inline void ct_cursor_commit(struct ct_cursor *c, uint32_t n) {
    c->used += n;
    atomic_store_explicit(&c->block->used, c->used, memory_order_release);
}

// Starts a fresh (zeroed) block of `block_size` bytes for `stream`.
void ct_cursor_start(struct ct_cursor *c, struct ct_block_header *b, uint32_t block_size, uint32_t stream,
                     uint64_t tid, uint64_t seq);
// Goes on writing a block that another writer left (a spare block), after its last record.
void ct_cursor_resume(struct ct_cursor *c, struct ct_block_header *b, uint32_t block_size);
// Appends a sized record (tag, varint length, body). False, and nothing written, if it does not fit.
bool ct_cursor_put_sized(struct ct_cursor *c, uint8_t tag, const void *body, size_t len);
// Marks the block sealed (its writer is done; the drain thread may unmap it) and detaches from it.
void ct_cursor_seal(struct ct_cursor *c);
// Detaches without sealing: the block goes on to another writer. Inline: the sleds' handlers use
// it too (ct_stream_write_call_in_place), where only integer registers may be touched.
CT_NO_INSTRUMENT static inline void ct_cursor_detach(struct ct_cursor *c) {
    *c = (struct ct_cursor){ 0 };
}

// A growable buffer for one metadata record's body (never used on the hot path).
struct ct_body {
    uint8_t *bytes;
    size_t len, cap;
    bool failed;        // an allocation failed: the record is not written
};
void ct_body_varint(struct ct_body *b, uint64_t v);
void ct_body_bytes(struct ct_body *b, const void *p, size_t n);  // varint length, then the bytes
void ct_body_free(struct ct_body *b);

#endif
