#include "ct_own_stream.h"
#include "ct_header.h"
#include "ct_ring.h"

CT_NO_INSTRUMENT void ct_own_stream_start(struct ct_own_stream *s) {
    struct ct_block_header *nb = s->cursor.block ? NULL : ct_ring_take();
    if (nb) ct_cursor_start(&s->cursor, nb, ct_ring_block_size(), s->id, 0, s->seq++);
}

CT_NO_INSTRUMENT bool ct_own_stream_put(struct ct_own_stream *s, uint8_t tag, const void *body, size_t len) {
    if (!ct_header_get()) return false;
    if (ct_cursor_put_sized(&s->cursor, tag, body, len)) return true;
    struct ct_block_header *nb = s->spare ? s->spare : ct_ring_take();
    s->spare = NULL;
    if (!nb) {
        ct_header_lose(CT_LOST_METADATA, 0);
        return false;
    }
    ct_cursor_seal(&s->cursor);
    ct_cursor_start(&s->cursor, nb, ct_ring_block_size(), s->id, 0, s->seq++);
    return ct_cursor_put_sized(&s->cursor, tag, body, len);
}

CT_NO_INSTRUMENT void ct_own_stream_seal(struct ct_own_stream *s) { ct_cursor_seal(&s->cursor); }

CT_NO_INSTRUMENT bool ct_own_stream_keep_spare(struct ct_own_stream *s) {
    if (!s->spare) s->spare = ct_ring_take();
    return s->spare != NULL;
}

CT_NO_INSTRUMENT void ct_own_stream_forget(struct ct_own_stream *s) {
    s->cursor = (struct ct_cursor){ 0 };
    s->seq = 0;
    s->spare = NULL;
}
