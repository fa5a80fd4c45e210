#include "ct_event_stream.h"
#include "ct_header.h"
#include "ct_meta.h"
#include "ct_own_stream.h"
#include "ct_ring.h"

#include <pthread.h>

// What a carry may have to write again, tracked as the drain thread writes every event: spans
// still open (each with its first milestones) and each mark name's latest mark, at most an eighth
// of the limit in all. Past that (or these counts) an open span is not kept and the mark name
// whose latest mark is the oldest is forgotten, and `lost` bit 10 says so: less is kept, never
// everything for ever.
#define CT_EVENTS_OPEN_MAX 1024u
#define CT_EVENTS_NAMES_MAX 256u
#define CT_EVENTS_POINTS_KEPT 4u

struct open_span {
    uint64_t id;
    uint64_t points[CT_EVENTS_POINTS_KEPT];  // the ticks of the milestones kept
    uint32_t npoints;
    uint32_t bytes;                          // its records kept: the begin and those milestones
};

struct latest_mark {
    uint64_t name, tick;                     // name: FNV-1a of its bytes
    uint32_t bytes;
};

static struct {
    pthread_mutex_t lock;
    struct ct_own_stream out;
    struct open_span open[CT_EVENTS_OPEN_MAX];
    uint32_t nopen;
    struct latest_mark latest[CT_EVENTS_NAMES_MAX];
    uint32_t nlatest;
    uint64_t kept_bytes;
} E = { .lock = PTHREAD_MUTEX_INITIALIZER, .out = { .id = CT_STREAM_EVENTS } };

// What the carry needs of one record (docs/trace-format.md): its tick, a span's id, a mark's name.
struct event {
    uint64_t tick, id, name;
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
        if (E.open[i].id == id) return (int)i;
    return -1;
}

CT_NO_INSTRUMENT static int name_index(uint64_t name) {
    for (uint32_t i = 0; i < E.nlatest; i++)
        if (E.latest[i].name == name) return (int)i;
    return -1;
}

CT_NO_INSTRUMENT static void not_kept(void) { ct_header_lose(CT_LOST_EVENTS_KEPT, 0); }

// Forgets the mark name whose latest mark is the oldest.
CT_NO_INSTRUMENT static void forget_oldest_name(void) {
    uint32_t oldest = 0;
    for (uint32_t i = 1; i < E.nlatest; i++)
        if (E.latest[i].tick < E.latest[oldest].tick) oldest = i;
    E.kept_bytes -= E.latest[oldest].bytes;
    E.latest[oldest] = E.latest[--E.nlatest];
    not_kept();
}

CT_NO_INSTRUMENT static void track_mark(const struct event *e, uint32_t bytes, uint64_t budget) {
    int i = name_index(e->name);
    if (i >= 0) {
        if (e->tick < E.latest[i].tick) return;  // not its latest (a carried copy of an older one)
        E.kept_bytes = E.kept_bytes - E.latest[i].bytes + bytes;
        E.latest[i].tick = e->tick;
        E.latest[i].bytes = bytes;
        return;
    }
    while (E.nlatest > 0 && (E.nlatest == CT_EVENTS_NAMES_MAX || E.kept_bytes + bytes > budget)) forget_oldest_name();
    if (E.kept_bytes + bytes > budget) {
        not_kept();
        return;
    }
    E.latest[E.nlatest++] = (struct latest_mark){ .name = e->name, .tick = e->tick, .bytes = bytes };
    E.kept_bytes += bytes;
}

CT_NO_INSTRUMENT static void track(uint8_t tag, const struct event *e, uint32_t bytes, uint64_t budget) {
    if (tag == CT_REC_SPAN_BEGIN) {
        if (E.nopen == CT_EVENTS_OPEN_MAX || E.kept_bytes + bytes > budget) {
            not_kept();
            return;
        }
        E.open[E.nopen++] = (struct open_span){ .id = e->id, .bytes = bytes };
        E.kept_bytes += bytes;
    } else if (tag == CT_REC_SPAN_POINT) {
        int i = open_index(e->id);
        if (i < 0 || E.open[i].npoints == CT_EVENTS_POINTS_KEPT) return;  // later milestones are not kept
        if (E.kept_bytes + bytes > budget) {
            not_kept();
            return;
        }
        E.open[i].points[E.open[i].npoints++] = e->tick;
        E.open[i].bytes += bytes;
        E.kept_bytes += bytes;
    } else if (tag == CT_REC_SPAN_END) {
        int i = open_index(e->id);
        if (i < 0) return;
        E.kept_bytes -= E.open[i].bytes;
        E.open[i] = E.open[--E.nopen];
    } else if (tag == CT_REC_MARK || tag == CT_REC_MARK_AT) {
        track_mark(e, bytes, budget);
    }
}

// A THREAD record (a live thread's name, written by the drain thread's poll: ct_meta_threads.c)
// outlives its block while it is its thread's latest name and the thread runs; a thread that ended
// wrote its last name into its own stream.
CT_NO_INSTRUMENT static bool thread_name_current(const uint8_t *p, const uint8_t *end,
                                                 bool (*is_current)(uint32_t, const char *, size_t)) {
    uint64_t stream, tid, len;
    if (!get_varint(&p, end, &stream) || !get_varint(&p, end, &tid) || !get_varint(&p, end, &len) ||
        len > (uint64_t)(end - p) || stream > UINT32_MAX)
        return false;
    return is_current((uint32_t)stream, (const char *)p, (size_t)len);
}

CT_NO_INSTRUMENT static bool must_outlive(uint8_t tag, const struct event *e) {
    if (tag == CT_REC_SPAN_BEGIN) return open_index(e->id) >= 0;
    if (tag == CT_REC_SPAN_POINT) {
        int i = open_index(e->id);
        for (uint32_t k = 0; i >= 0 && k < E.open[i].npoints; k++)
            if (E.open[i].points[k] == e->tick) return true;
        return false;
    }
    if (tag == CT_REC_MARK || tag == CT_REC_MARK_AT) {
        int i = name_index(e->name);
        return i >= 0 && E.latest[i].tick == e->tick;
    }
    return false;
}

CT_NO_INSTRUMENT void ct_event_stream_write(uint8_t tag, const uint8_t *body, size_t len) {
    struct ct_file_header *h = ct_header_get();
    if (!h || !h->limit) {
        ct_meta_write_record(tag, body, len);
        return;
    }
    pthread_mutex_lock(&E.lock);
    struct event e;
    if (parse(tag, body, body + len, &e)) track(tag, &e, (uint32_t)len + 3, h->limit / 8);
    ct_own_stream_put(&E.out, tag, body, len);
    pthread_mutex_unlock(&E.lock);
}

// Written again before the block is reset (a process killed in between leaves both copies, which
// a reader takes as one: docs/trace-format.md). They came from one block, so they fit in the
// current block's room and the spare; a record that finds no room is counted.
CT_NO_INSTRUMENT void ct_event_stream_carry(const struct ct_block_header *b, uint32_t block_size,
                                           bool (*name_is_current)(uint32_t stream, const char *name, size_t len)) {
    uint32_t used = atomic_load_explicit(&b->used, memory_order_acquire);
    if (used > block_size - CT_BLOCK_HEADER_SIZE) return;
    const uint8_t *p = (const uint8_t *)b + CT_BLOCK_HEADER_SIZE, *end = p + used;
    pthread_mutex_lock(&E.lock);
    ct_own_stream_keep_spare(&E.out);
    while (p < end) {
        uint8_t tag = *p++;
        uint64_t len;
        if (!(tag & 0x80) || !get_varint(&p, end, &len) || len > (uint64_t)(end - p)) break;
        struct event e;
        bool keep = tag == CT_REC_THREAD ? thread_name_current(p, p + len, name_is_current)
                                         : parse(tag, p, p + len, &e) && must_outlive(tag, &e);
        if (keep && !ct_own_stream_put(&E.out, tag, p, len)) not_kept();
        p += len;
    }
    pthread_mutex_unlock(&E.lock);
}

CT_NO_INSTRUMENT void ct_event_stream_keep_spare(void) {
    struct ct_file_header *h = ct_header_get();
    if (!h || !h->limit) return;
    pthread_mutex_lock(&E.lock);
    ct_own_stream_keep_spare(&E.out);
    pthread_mutex_unlock(&E.lock);
}

CT_NO_INSTRUMENT void ct_event_stream_close(void) {
    pthread_mutex_lock(&E.lock);
    ct_own_stream_seal(&E.out);
    pthread_mutex_unlock(&E.lock);
}

CT_NO_INSTRUMENT void ct_event_stream_forget(void) {
    pthread_mutex_init(&E.lock, NULL);
    ct_own_stream_forget(&E.out);
    E.nopen = 0;
    E.nlatest = 0;
    E.kept_bytes = 0;
}
