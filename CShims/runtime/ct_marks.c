// Marks and frames: the queue that carries calltrace_mark / calltrace_mark_extra / calltrace_mark_at /
// calltrace_frame (calltrace.h; their entry points are in ct_events.c) and the span events of
// ct_spans.c.
//
// Why a queue. The calls come from any of the program's threads, at any time: in a constructor
// before the trace is open, 60 to 1000 times a second for frames, now and then from a signal
// handler. They must never block and must cost little. The metadata stream is written under
// ct_meta.c's mutex, which the drain thread holds while it reads /proc (modules, thread names) and
// fork() holds across the fork: waiting for it could stall a frame for milliseconds. So a call only
// takes the time, copies its event into a slot of a fixed lock-free queue and returns; the drain
// thread writes the queued events (ct_event_stream.c: into the metadata stream, or a flight
// recorder's events stream) on every pass (1-8 ms apart), and the
// exit path writes the rest just before the trace closes. Events from before the trace opened wait in the
// queue until then. When the queue is full (no drain thread, or over CT_MARK_SLOTS events in one
// pass) the event is dropped and the header says so (CT_LOST_MARKS).
//
// The queue is a bounded multi-producer ring with a sequence number per slot (D. Vyukov's): a
// producer claims position `pos` by a compare-and-swap on `tail` while the slot's `seq` says it is
// free (seq == pos), fills it, and publishes it with a release store of seq = pos + 1. The one
// consumer (under `flush_lock`) reads slots in order while seq == head + 1 and frees each with
// seq = head + CT_MARK_SLOTS. Slot i stores seq - i, so that all-zero static memory is the empty
// queue: nothing to set up, and the 424 KiB of events are touched only as far as they are used. A producer holds no lock, so a signal handler that marks in the middle
// of its thread's own mark simply takes the next slot. The consumer stops at a slot that is claimed
// but not yet published (its producer preempted) and comes back on the next pass; a handler that
// longjmps out of a mark in that window leaves its slot claimed for good, and the events after it
// are then dropped and counted once the queue fills: an accepted limit for a window of a few
// instructions.
#include "ct_marks.h"
#include "ct_clock.h"
#include "ct_header.h"
#include "ct_event_stream.h"
#include "ct_ring.h"
#include "ct_runtime.h"
#include "ct_thread.h"
#include "ct_writer.h"
#include "ct_syscall.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CT_MARK_SLOTS 1024u   // a power of two

struct slot {
    _Atomic uint64_t seq;            // the sequence number, less the slot's index (see above)
    uint64_t tick;
    uint64_t value;                  // a span's id, or calltrace_mark_at's CLOCK_MONOTONIC ns
    uint32_t tid, stream;
    uint8_t kind, name_len, extra_len;
    char name[CT_MARK_NAME_MAX];
    char extra[CT_MARK_EXTRA_MAX];
};

static struct {
    _Atomic uint64_t tail;           // producers' next position
    uint64_t head;                   // the consumer's next position (under flush_lock)
    _Atomic bool closed;             // the trace closed: events go nowhere (counted)
    _Atomic uint64_t early_drops;    // dropped while no header was there to count them in
    _Atomic uint32_t generation;     // bumped in a fork child: cached thread ids are stale
    pthread_mutex_t flush_lock;
    struct slot slots[CT_MARK_SLOTS];     // 424 bytes each
} Q = { .flush_lock = PTHREAD_MUTEX_INITIALIZER };

CT_NO_INSTRUMENT static inline uint64_t load_seq(uint32_t i, memory_order order) {
    return atomic_load_explicit(&Q.slots[i].seq, order) + i;
}

CT_NO_INSTRUMENT static inline void store_seq(uint32_t i, uint64_t seq) {
    atomic_store_explicit(&Q.slots[i].seq, seq - i, memory_order_release);
}

// The calling thread's kernel id, cached: gettid is a system call, and frames come often.
static CT_TLS struct {
    uint32_t tid;
    uint32_t generation;
} self_id;

CT_NO_INSTRUMENT static uint32_t thread_id(void) {
    uint32_t generation = atomic_load_explicit(&Q.generation, memory_order_relaxed);
    if (CT_UNLIKELY(self_id.tid == 0 || self_id.generation != generation)) {
        self_id.tid = (uint32_t)ct_syscall(SYS_gettid);
        self_id.generation = generation;
    }
    return self_id.tid;
}

CT_NO_INSTRUMENT static void count_drop(void) {
    if (ct_header_get()) {
        ct_header_lose(CT_LOST_MARKS, 0);
    } else {
        atomic_fetch_add_explicit(&Q.early_drops, 1, memory_order_relaxed);
    }
}

// Copies at most `max` bytes of `text` (NULL: none), cut back to a UTF-8 character boundary.
CT_NO_INSTRUMENT static uint8_t copy_text(char *out, const char *text, uint32_t max) {
    if (!text) return 0;
    uint32_t n = 0;
    while (n < max && text[n]) n++;
    if (n == max && text[n]) {
        // Cut: do not end inside a character (continuation bytes are 10xxxxxx).
        while (n > 0 && ((uint8_t)text[n] & 0xC0) == 0x80) n--;
    }
    memcpy(out, text, n);
    return (uint8_t)n;
}

// Claims a slot, or NULL (counted) when the queue is full. Lock-free.
CT_NO_INSTRUMENT static struct slot *claim(uint64_t *pos_out) {
    uint64_t pos = atomic_load_explicit(&Q.tail, memory_order_relaxed);
    for (;;) {
        uint32_t i = (uint32_t)(pos & (CT_MARK_SLOTS - 1));
        int64_t diff = (int64_t)(load_seq(i, memory_order_acquire) - pos);
        if (diff == 0) {
            if (atomic_compare_exchange_weak_explicit(&Q.tail, &pos, pos + 1, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                *pos_out = pos;
                return &Q.slots[i];
            }
        } else if (diff < 0) {
            return NULL; // the slot still holds an event from a lap ago: full
        } else {
            pos = atomic_load_explicit(&Q.tail, memory_order_relaxed);
        }
    }
}

CT_NO_INSTRUMENT void ct_marks_drop_early(void) { atomic_fetch_add_explicit(&Q.early_drops, 1, memory_order_relaxed); }

CT_NO_INSTRUMENT bool ct_marks_accepting(void) {
    if (!ct_rt.enabled) return false; // no CALLTRACE_* setting: no trace, nothing to do
    if (CT_UNLIKELY(atomic_load_explicit(&Q.closed, memory_order_relaxed))) {
        count_drop();
        return false;
    }
    return true;
}

CT_NO_INSTRUMENT bool ct_events_queue(uint8_t kind, uint64_t value, const char *name, const char *extra) {
    uint64_t tick = ct_now();
    uint64_t pos;
    struct slot *s = claim(&pos);
    if (!s) {
        count_drop();
        return false;
    }
    s->tick = tick;
    s->value = value;
    s->tid = thread_id();
    // The thread's stream, when it records (0: it does not, or not yet).
    s->stream = ct_self.state == CT_THREAD_ACTIVE && ct_self.recording ? ct_self.stream.id : 0;
    s->kind = kind;
    bool named = kind == CT_EVENT_MARK || kind == CT_EVENT_MARK_AT || kind == CT_EVENT_SPAN_BEGIN
                 || kind == CT_EVENT_SPAN_POINT;
    bool with_extra = kind == CT_EVENT_MARK || kind == CT_EVENT_MARK_AT || kind == CT_EVENT_SPAN_BEGIN;
    s->name_len = named ? copy_text(s->name, name, CT_MARK_NAME_MAX) : 0;
    s->extra_len = with_extra ? copy_text(s->extra, extra, CT_MARK_EXTRA_MAX) : 0;
    store_seq((uint32_t)(pos & (CT_MARK_SLOTS - 1)), pos + 1);
    return true;
}

// The record tag of each kind of event, and what its body holds after stream, tid and tick.
static const struct {
    uint8_t tag;
    bool value, name, extra;
} layout[] = {
    [CT_EVENT_MARK] = { CT_REC_MARK, false, true, true },
    [CT_EVENT_FRAME] = { CT_REC_FRAME, false, false, false },
    [CT_EVENT_MARK_AT] = { CT_REC_MARK_AT, true, true, true },
    [CT_EVENT_SPAN_BEGIN] = { CT_REC_SPAN_BEGIN, true, true, true },
    [CT_EVENT_SPAN_POINT] = { CT_REC_SPAN_POINT, true, true, false },
    [CT_EVENT_SPAN_END] = { CT_REC_SPAN_END, true, false, false },
};

// Writes the published events in order, up to the first one still being filled. A record is built
// in a buffer on the stack: the largest (a MARK_AT or SPAN_BEGIN) is 4 varints and two strings,
// well under 512 bytes.
CT_NO_INSTRUMENT static void flush(void) {
    if (!ct_header_get()) return;
    pthread_mutex_lock(&Q.flush_lock);
    uint64_t early = atomic_exchange_explicit(&Q.early_drops, 0, memory_order_relaxed);
    if (early) ct_header_lose(CT_LOST_MARKS, 0);
    for (;;) {
        uint32_t i = (uint32_t)(Q.head & (CT_MARK_SLOTS - 1));
        if (load_seq(i, memory_order_acquire) != Q.head + 1) break;
        const struct slot *s = &Q.slots[i];
        uint8_t body[16 + 4 * 10 + CT_MARK_NAME_MAX + CT_MARK_EXTRA_MAX + 20];
        uint8_t *p = ct_put_varint(body, s->stream);
        p = ct_put_varint(p, s->tid);
        p = ct_put_varint(p, s->tick);
        uint8_t kind = s->kind < sizeof layout / sizeof layout[0] ? s->kind : CT_EVENT_MARK;
        if (layout[kind].value) p = ct_put_varint(p, s->value);
        if (layout[kind].name) {
            p = ct_put_varint(p, s->name_len);
            memcpy(p, s->name, s->name_len);
            p += s->name_len;
        }
        if (layout[kind].extra) {
            p = ct_put_varint(p, s->extra_len);
            memcpy(p, s->extra, s->extra_len);
            p += s->extra_len;
        }
        uint8_t tag = layout[kind].tag;
        // Copied out: the slot is free for producers from here on.
        store_seq(i, Q.head + CT_MARK_SLOTS);
        Q.head++;
        ct_event_stream_write(tag, body, (size_t)(p - body));
    }
    pthread_mutex_unlock(&Q.flush_lock);
}

CT_NO_INSTRUMENT static void close_queue(void) {
    flush();
    atomic_store_explicit(&Q.closed, true, memory_order_relaxed);
}

CT_NO_INSTRUMENT static void after_fork(void) {
    // Only the forking thread runs in the child: nobody else touches the queue now. The events
    // waiting (published or still being filled by a thread the child does not have) are skipped:
    // their slots are freed for the next lap, touching no more pages than they hold.
    pthread_mutex_init(&Q.flush_lock, NULL);
    uint64_t tail = atomic_load_explicit(&Q.tail, memory_order_relaxed);
    for (uint64_t pos = Q.head; pos < tail; pos++) store_seq((uint32_t)(pos & (CT_MARK_SLOTS - 1)), pos + CT_MARK_SLOTS);
    Q.head = tail;
    atomic_store_explicit(&Q.closed, false, memory_order_relaxed);
    atomic_store_explicit(&Q.early_drops, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&Q.generation, 1, memory_order_relaxed);
}

// An exec ends the image before the drain thread's next pass: the events still queued would go
// with it. So the thread that execs wakes the drain thread and waits (20 ms at most, in sleeps: it
// may be a signal handler, which must take no lock) until the last event queued so far has been
// written; what is still queued then (a thread stopped between claiming a slot and filling it) is
// counted as dropped.
CT_NO_INSTRUMENT static void before_exec(void) {
    if (!ct_header_get() || atomic_load_explicit(&Q.closed, memory_order_relaxed)) return;
    uint64_t last = atomic_load_explicit(&Q.tail, memory_order_acquire);
    if (last == 0) return;
    last--;  // written once its slot is freed for the next lap
    uint32_t i = (uint32_t)(last & (CT_MARK_SLOTS - 1));
    if ((int64_t)(load_seq(i, memory_order_acquire) - (last + CT_MARK_SLOTS)) >= 0) return;
    ct_ring_wake();
    for (int waited = 0; waited < 200; waited++) {
        struct timespec ts = { 0, 100 * 1000 };
        nanosleep(&ts, NULL);
        if ((int64_t)(load_seq(i, memory_order_acquire) - (last + CT_MARK_SLOTS)) >= 0) return;
    }
    ct_header_lose(CT_LOST_MARKS, 0);
}

const struct ct_feature ct_marks_feature = {
    .name = "marks",
    .pass = flush,
    .stop = flush,
    .close = close_queue,
    .after_fork = after_fork,
    .before_exec = before_exec,
};
