// A stream the runtime writes itself, not a thread of the program: the metadata (stream 0,
// ct_meta.c) and a flight recorder's events (CT_STREAM_EVENTS, ct_event_stream.c). Sized records only,
// each into the stream's current block or, when it does not fit, a fresh one from the ring. Its
// writer never waits for a block: a record that finds none is counted (lost bit 9, METADATA).
// Callers hold their stream's lock.
#ifndef CT_OWN_STREAM_H
#define CT_OWN_STREAM_H

#include "ct_writer.h"

struct ct_own_stream {
    struct ct_cursor cursor;
    uint64_t seq;       // the next block's
    uint32_t id;
    // A block taken ahead, used before the ring's (the events stream keeps one: ct_event_stream.c).
    struct ct_block_header *spare;
};

// Takes the stream's first block now, if it has none (the metadata stream, as the file opens).
void ct_own_stream_start(struct ct_own_stream *s);
// Appends one sized record. False when it was not written (no header, no block, or larger than
// a block's payload). A fresh block is the spare, if any, else the ring's.
bool ct_own_stream_put(struct ct_own_stream *s, uint8_t tag, const void *body, size_t len);
void ct_own_stream_seal(struct ct_own_stream *s);
// Takes a spare block from the ring, if it has none. False when it has none.
bool ct_own_stream_keep_spare(struct ct_own_stream *s);
// A fork child's: the parent's blocks are not ours.
void ct_own_stream_forget(struct ct_own_stream *s);

#endif
