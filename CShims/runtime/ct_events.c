#include "ct_events.h"
#include "ct_header.h"
#include "ct_meta.h"
#include "ct_own_stream.h"

#include <pthread.h>

// What the carry keeps track of (the drain thread writes every event, so it knows): spans still
// open, and each mark name's latest tick. Past these sizes it keeps more than it must rather than
// lose one: a span not in a full table may be open, a mark of a name not in one may be the latest.
#define CT_EVENTS_OPEN_MAX 1024u
#define CT_EVENTS_NAMES_MAX 256u

static struct {
    pthread_mutex_t lock;
    struct ct_own_stream out;
    uint64_t open[CT_EVENTS_OPEN_MAX];
    uint32_t nopen;
    bool open_overflow;
    struct { uint64_t name, tick; } latest[CT_EVENTS_NAMES_MAX];
    uint32_t nlatest;
    bool latest_overflow;
} E = { .lock = PTHREAD_MUTEX_INITIALIZER, .out = { .id = CT_STREAM_EVENTS } };

// What the carry needs of one record (docs/trace-format.md): its tick, a span's id, a mark's name.
struct event {
    uint64_t tick, id, name;   // name: FNV-1a of its bytes
};

CT_NO_INSTRUMENT static bool get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
    *v = 0;
    for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t byte = *(*p)++;
        *v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) return true;
    }
    return false;
}

CT_NO_INSTRUMENT static bool parse(uint8_t tag, const uint8_t *p, const uint8_t *end, struct event *e) {
    uint64_t skip, len;
    if (!get_varint(&p, end, &skip) || !get_varint(&p, end, &skip) || !get_varint(&p, end, &e->tick))
        return false;  // stream, tid, tick
    bool span = tag == CT_REC_SPAN_BEGIN || tag == CT_REC_SPAN_POINT || tag == CT_REC_SPAN_END;
    if (span) return get_varint(&p, end, &e->id);
    if (tag == CT_REC_MARK_AT && !get_varint(&p, end, &skip)) return false;  // monotonic_ns
    if (!get_varint(&p, end, &len) || len > (uint64_t)(end - p)) return false;
    e->name = 1469598103934665603ull;  // FNV-1a
    for (uint64_t i = 0; i < len; i++) e->name = (e->name ^ p[i]) * 1099511628211ull;
    return true;
}

CT_NO_INSTRUMENT static int open_index(uint64_t id) {
    for (uint32_t i = 0; i < E.nopen; i++)
        if (E.open[i] == id) return (int)i;
    return -1;
}

CT_NO_INSTRUMENT static int name_index(uint64_t name) {
    for (uint32_t i = 0; i < E.nlatest; i++)
        if (E.latest[i].name == name) return (int)i;
    return -1;
}

CT_NO_INSTRUMENT static void track(uint8_t tag, const struct event *e) {
    if (tag == CT_REC_SPAN_BEGIN) {
        if (E.nopen < CT_EVENTS_OPEN_MAX) E.open[E.nopen++] = e->id;
        else E.open_overflow = true;
    } else if (tag == CT_REC_SPAN_END) {
        int i = open_index(e->id);
        if (i >= 0) E.open[i] = E.open[--E.nopen];
    } else if (tag == CT_REC_MARK || tag == CT_REC_MARK_AT) {
        int i = name_index(e->name);
        if (i >= 0) {
            if (e->tick >= E.latest[i].tick) E.latest[i].tick = e->tick;
        } else if (E.nlatest < CT_EVENTS_NAMES_MAX) {
            E.latest[E.nlatest].name = e->name;
            E.latest[E.nlatest++].tick = e->tick;
        } else {
            E.latest_overflow = true;
        }
    }
}

CT_NO_INSTRUMENT static bool must_outlive(uint8_t tag, const struct event *e) {
    if (tag == CT_REC_SPAN_BEGIN || tag == CT_REC_SPAN_POINT) return open_index(e->id) >= 0 || E.open_overflow;
    if (tag == CT_REC_MARK || tag == CT_REC_MARK_AT) {
        int i = name_index(e->name);
        return i >= 0 ? E.latest[i].tick == e->tick : E.latest_overflow;
    }
    return false;
}

CT_NO_INSTRUMENT void ct_events_write(uint8_t tag, const uint8_t *body, size_t len) {
    struct ct_file_header *h = ct_header_get();
    if (!h || !h->limit) {
        ct_meta_write_record(tag, body, len);
        return;
    }
    pthread_mutex_lock(&E.lock);
    struct event e;
    if (parse(tag, body, body + len, &e)) track(tag, &e);
    ct_own_stream_put(&E.out, tag, body, len);
    pthread_mutex_unlock(&E.lock);
}

// Written again before the block is reset (a process killed in between leaves both copies, which
// a reader takes as one: docs/trace-format.md).
CT_NO_INSTRUMENT void ct_events_carry(const struct ct_block_header *b, uint32_t block_size) {
    uint32_t used = atomic_load_explicit(&b->used, memory_order_acquire);
    if (used > block_size - CT_BLOCK_HEADER_SIZE) return;
    const uint8_t *p = (const uint8_t *)b + CT_BLOCK_HEADER_SIZE, *end = p + used;
    pthread_mutex_lock(&E.lock);
    while (p < end) {
        uint8_t tag = *p++;
        uint64_t len;
        if (!(tag & 0x80) || !get_varint(&p, end, &len) || len > (uint64_t)(end - p)) break;
        struct event e;
        if (parse(tag, p, p + len, &e) && must_outlive(tag, &e)) ct_own_stream_put(&E.out, tag, p, len);
        p += len;
    }
    pthread_mutex_unlock(&E.lock);
}

CT_NO_INSTRUMENT void ct_events_close(void) {
    pthread_mutex_lock(&E.lock);
    ct_own_stream_seal(&E.out);
    pthread_mutex_unlock(&E.lock);
}

CT_NO_INSTRUMENT void ct_events_forget(void) {
    pthread_mutex_init(&E.lock, NULL);
    ct_own_stream_forget(&E.out);
    E.nopen = 0;
    E.open_overflow = false;
    E.nlatest = 0;
    E.latest_overflow = false;
}
