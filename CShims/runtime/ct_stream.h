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

// Writes one CALL record: measured `duration`, and the number of timed calls beneath it, whose
// hooks' overhead the reader takes out. Async-signal-safe and lock-free.
enum ct_write_result ct_stream_write_call(struct ct_stream *s, uintptr_t fn, uintptr_t site, uint64_t start,
                                          uint64_t duration, uint64_t descendants, uint64_t depth, unsigned flags);

// For a thread that has taken the stream over (at exit, from another thread): writes into the
// current lane with no busy/closed protocol, since the owner no longer writes there.
enum ct_write_result ct_stream_write_call_owned(struct ct_stream *s, uintptr_t fn, uintptr_t site,
                                                uint64_t start, uint64_t duration, uint64_t descendants,
                                                uint64_t depth, unsigned flags);

// The thread is done with its blocks: seal them (the drain thread may unmap them), except those of
// lanes still held (a write that a handler left or interrupted).
void ct_stream_seal(struct ct_stream *s);
// Another thread taking the stream over at exit: waits until no write holds the current lane
// (true), or gives up at `deadline_ns` (CLOCK_MONOTONIC) (false). Call after setting `closed`.
bool ct_stream_wait_idle(struct ct_stream *s, uint64_t deadline_ns);
// The thread ends: its block, if it has room left, goes to the next thread that starts a stream.
void ct_stream_retire(struct ct_stream *s);

#endif
