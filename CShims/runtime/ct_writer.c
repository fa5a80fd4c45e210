#include "ct_writer.h"

#include <stdlib.h>
#include <string.h>

CT_NO_INSTRUMENT void ct_cursor_start(struct ct_cursor *c, struct ct_block_header *b, uint32_t block_size,
                                      uint32_t stream, uint64_t tid, uint64_t seq) {
    // The header is complete before anything is committed: a reader that finds the magic with
    // used == 0 sees an empty block.
    memcpy(b->magic, "CTBK", 4);
    b->stream = stream;
    b->tid = tid;
    b->seq = seq;
    c->block = b;
    c->payload = (uint8_t *)b + CT_BLOCK_HEADER_SIZE;
    c->capacity = block_size - CT_BLOCK_HEADER_SIZE;
    c->used = 0;
}

CT_NO_INSTRUMENT void ct_cursor_resume(struct ct_cursor *c, struct ct_block_header *b, uint32_t block_size) {
    c->block = b;
    c->payload = (uint8_t *)b + CT_BLOCK_HEADER_SIZE;
    c->capacity = block_size - CT_BLOCK_HEADER_SIZE;
    c->used = atomic_load_explicit(&b->used, memory_order_acquire);
}

CT_NO_INSTRUMENT bool ct_cursor_put_sized(struct ct_cursor *c, uint8_t tag, const void *body, size_t len) {
    if (!c->block || len > c->capacity || (size_t)ct_cursor_room(c) < 1 + 10 + len) return false;
    uint8_t *p = c->payload + c->used;
    uint8_t *q = p;
    *q++ = tag;
    q = ct_put_varint(q, len);
    memcpy(q, body, len);
    q += len;
    ct_cursor_commit(c, (uint32_t)(q - p));
    return true;
}

CT_NO_INSTRUMENT void ct_cursor_seal(struct ct_cursor *c) {
    if (c->block) atomic_fetch_or_explicit(&c->block->flags, CT_BLOCK_SEALED, memory_order_release);
    ct_cursor_detach(c);
}


CT_NO_INSTRUMENT static bool body_reserve(struct ct_body *b, size_t more) {
    if (b->failed) return false;
    if (b->len + more <= b->cap) return true;
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < b->len + more) cap *= 2;
    uint8_t *p = realloc(b->bytes, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->bytes = p;
    b->cap = cap;
    return true;
}

CT_NO_INSTRUMENT void ct_body_varint(struct ct_body *b, uint64_t v) {
    if (!body_reserve(b, 10)) return;
    b->len = (size_t)(ct_put_varint(b->bytes + b->len, v) - b->bytes);
}

CT_NO_INSTRUMENT void ct_body_bytes(struct ct_body *b, const void *p, size_t n) {
    ct_body_varint(b, n);
    if (!body_reserve(b, n)) return;
    if (n) memcpy(b->bytes + b->len, p, n);
    b->len += n;
}

CT_NO_INSTRUMENT void ct_body_free(struct ct_body *b) {
    free(b->bytes);
    *b = (struct ct_body){ 0 };
}
