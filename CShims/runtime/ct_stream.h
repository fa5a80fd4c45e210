// A stream: the records of one thread, written into blocks of the trace file.
//
// Only its own thread writes a stream, so no atomics are needed between writers; the block's
// `used` is release-stored after each record (ct_writer.h). A signal handler on the same thread
// can interrupt a write. The write state (block, position, deltas) lives in a *lane*, and a writer
// holds its lane (`busy_sp`) for the whole write, so nothing else ever writes into it meanwhile:
//   - a nested write (a handler deeper on the same stack, or on another stack) finds the current
//     lane held and is dropped and counted instead of corrupting the one it interrupted;
//   - a handler may also longjmp, out of the write for good or only within itself (the jump
//     wrappers count jumps, `jumps`). A writer that finds the lane held, with a jump since or its
//     own frame above the holder's, cannot tell a dead holder from a live one, so it leaves that
//     lane alone and moves the stream to another lane, in a fresh block (a takeover). A holder
//     that is still alive finishes its record in its own lane, whole and in order.
// A lane is free again when its holder ends its write, or when the holder's frame is certainly
// gone: a writer on the same stack whose frame is at or above the holder's (a live holder is always
// deeper than anything that interrupted it). Writers look for such lanes while any is held, so a
// handler's jump out of a write costs a lane only until the program's next record from as high
// up. With every lane held, the record is dropped (counted with the nested drops).
#ifndef CT_STREAM_H
#define CT_STREAM_H

#include "ct_writer.h"

#define CT_STREAM_LANES 8

struct ct_lane {
    struct ct_cursor cursor;
    uint64_t prev_fn, prev_site, prev_end, prev_depth;  // delta state, reset per piece
    uintptr_t busy_sp;               // the holder's frame while a write is in progress, else 0
    uint64_t busy_jumps;             // `jumps` when the holder started its write
};

struct ct_stream {
    struct ct_lane lanes[CT_STREAM_LANES];
    uint32_t lane;                   // the lane new records go to
    uint32_t others_held;            // a takeover left another lane held: look for dead holders
    uint32_t id;                     // stream id in the trace (1 = the first thread to record)
    uint64_t tid;
    _Atomic uint64_t seq;            // next piece's sequence number (a block, or a segment of one)
    uint64_t jumps;                  // longjmps and throws seen on this thread
    uintptr_t stack_lo, stack_hi;    // the thread's own stack (see ct_stream_write_call)
    _Atomic uint32_t closed;         // set by another thread taking the stream over at exit (1 while
                                     // it writes the open calls, 2 once written)
};

enum ct_write_result {
    CT_WRITTEN,
    CT_DROPPED_FULL,      // no block was ready (counted in the header with its reason)
    CT_DROPPED_NESTED,    // a signal handler interrupted a write on this thread
    CT_DROPPED_CLOSED,    // the process is exiting and another thread closed this stream
};

// One call to record: its function, call site, start, measured duration, depth, the timed calls
// beneath it and those its handlers did not time (whose overhead the reader takes out), and its
// CT_CALL_* flags.
struct ct_call_record {
    uintptr_t fn, site;
    uint64_t start, duration, depth, descendants, untimed;
    unsigned flags;
};

// Writes one CALL record. Async-signal-safe and lock-free.
enum ct_write_result ct_stream_write_call(struct ct_stream *s, const struct ct_call_record *c);

// Holds `l` for a write from frame `sp`. Only the calling thread and its handlers touch lanes, so
// compiler fences order these stores for everything that can interrupt them.
CT_NO_INSTRUMENT static inline void ct_lane_hold(struct ct_stream *s, struct ct_lane *l, uintptr_t sp) {
    l->busy_jumps = s->jumps;
    atomic_signal_fence(memory_order_seq_cst);
    l->busy_sp = sp;
    atomic_signal_fence(memory_order_seq_cst);
}

// Encodes one CALL record into the held lane `l`, whose block has room for it
// (CT_CALL_MAX_BYTES), and publishes it: the record's bytes happen-before the new `used` for any
// reader of the mapping.
CT_NO_INSTRUMENT static inline void ct_lane_put_call(struct ct_lane *l, const struct ct_call_record *c) {
    uint8_t *p = l->cursor.payload + l->cursor.used;
    uint8_t *q = p;
    unsigned flags = c->flags | (c->descendants ? CT_CALL_DESCENDANTS : 0);
    *q++ = (uint8_t)((c->untimed ? CT_REC_CALL_UNTIMED : CT_REC_CALL) | flags);
    q = ct_put_varint(q, ct_zigzag((uint64_t)c->fn - l->prev_fn));
    q = ct_put_varint(q, ct_zigzag((uint64_t)c->site - l->prev_site));
    q = ct_put_varint(q, ct_zigzag(c->start - l->prev_end));
    q = ct_put_varint(q, c->duration);
    q = ct_put_varint(q, ct_zigzag(c->depth - l->prev_depth));
    if (c->descendants) q = ct_put_varint(q, c->descendants);
    if (c->untimed) q = ct_put_varint(q, c->untimed);
    ct_cursor_commit(&l->cursor, (uint32_t)(q - p));
    l->prev_fn = c->fn;
    l->prev_site = c->site;
    l->prev_end = c->start + c->duration;
    l->prev_depth = c->depth;
}

// ct_stream_write_call's straight path alone: the current lane free, no other lane held, room in
// its block, no jump or handler in the way, the stream not closed. False, having written nothing
// (and left the lane free), when any of that does not hold: then ct_stream_write_call does the
// rest. Everything here is inline and touches integer registers only, so the sleds' handlers can
// record a call without saving the vector state (ct_sled_hooks.c).
CT_NO_INSTRUMENT static inline bool ct_stream_write_call_in_place(struct ct_stream *s, const struct ct_call_record *c) {
    uint32_t current = s->lane;
    struct ct_lane *l = &s->lanes[current];
    uint64_t jumps = s->jumps;
    atomic_signal_fence(memory_order_seq_cst);
    if (l->busy_sp != 0 || s->others_held) return false;
    ct_lane_hold(s, l, (uintptr_t)__builtin_frame_address(0));
    // A handler between the test and the hold may have moved the stream on, or written and been
    // cut short by a jump (ct_stream_write_call starts a fresh block then); the closed check
    // after the hold as there.
    bool ok = s->lane == current && s->jumps == jumps && !s->others_held &&
              !atomic_load_explicit(&s->closed, memory_order_relaxed) && ct_cursor_room(&l->cursor) >= CT_CALL_MAX_BYTES;
    if (ok) ct_lane_put_call(l, c);
    else if (s->lane == current && s->jumps != jumps) ct_cursor_detach(&l->cursor);  // as ct_stream_write_call does
    atomic_signal_fence(memory_order_seq_cst);
    l->busy_sp = 0;
    return ok;
}

// For a thread that has taken the stream over (at exit, from another thread): writes into the
// current lane with no busy/closed protocol, since the owner no longer writes there.
enum ct_write_result ct_stream_write_call_owned(struct ct_stream *s, const struct ct_call_record *c);

// The thread is done with its blocks: seal them (the drain thread may unmap them), except those of
// lanes still held (a write that a handler left or interrupted).
void ct_stream_seal(struct ct_stream *s);
// Another thread taking the stream over at exit: waits until no write holds the current lane
// (true), or gives up at `deadline_ns` (CLOCK_MONOTONIC) (false). Call after setting `closed`.
bool ct_stream_wait_idle(struct ct_stream *s, uint64_t deadline_ns);
// The thread ends: its block, if it has room left, goes to the next thread that starts a stream.
void ct_stream_retire(struct ct_stream *s);
// A thread ends, in a flight recorder's trace: its name (a THREAD record) goes into its own stream,
// after its last calls, so it is in the thread's newest piece, the last of its pieces to be reused,
// and lives exactly as long as some of its calls do; a thread that recorded nothing leaves no name
// (docs/design.md, "The flight recorder"). On the thread, before ct_stream_retire. True in a flight
// recorder's trace (the metadata stream gets no name for the thread then).
bool ct_stream_name_at_end(struct ct_stream *s);

#endif
