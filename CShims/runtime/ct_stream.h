// A stream: the records of one thread, written into blocks of the trace file.
//
// Only its own thread writes a stream, so no atomics are needed between writers; the block's
// `used` is release-stored after each record (ct_writer.h). A signal handler on the same thread
// can interrupt a write: `busy_sp` marks a write in progress, and a nested write (a handler deeper
// on the same stack, or on another stack) is dropped and counted instead of corrupting the one it
// interrupted. A handler may also longjmp out and abandon the write for good; the jump wrappers
// count jumps (`jumps`), so a later writer knows, and takes over (ct_stream_write_call).
#ifndef CT_STREAM_H
#define CT_STREAM_H

#include "ct_writer.h"

struct ct_stream {
    struct ct_cursor cursor;
    uint32_t id;                     // stream id in the trace (1 = the first thread to record)
    uint64_t tid;
    uint64_t seq;                    // next piece's sequence number (a block, or a segment of one)
    uint64_t prev_fn, prev_site, prev_end, prev_depth;  // delta state, reset per piece
    uintptr_t busy_sp;
    uint64_t busy_jumps;             // `jumps` when the write in progress started
    uint64_t jumps;                  // longjmps and throws seen on this thread
    uintptr_t stack_lo, stack_hi;    // the thread's own stack (see ct_stream_write_call)
    _Atomic uint32_t closed;         // set by another thread taking the stream over at exit
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

// For a thread that has taken the stream over (at exit, from another thread): writes with no
// busy/closed protocol, since the owner no longer writes.
enum ct_write_result ct_stream_write_call_owned(struct ct_stream *s, uintptr_t fn, uintptr_t site,
                                                uint64_t start, uint64_t duration, uint64_t descendants,
                                                uint64_t depth, unsigned flags);

// The thread is done with its block: seal it (the drain thread may unmap it).
void ct_stream_seal(struct ct_stream *s);
// The thread ends: its block, if it has room left, goes to the next thread that starts a stream.
void ct_stream_retire(struct ct_stream *s);

#endif
