// The program's events: marks, frames, span events (ct_marks.c), run delays (ct_sched.c) and
// hangs (ct_hang.c). They go into the metadata stream; in a flight recorder's trace
// (CALLTRACE_LIMIT) into a stream of their own, CT_STREAM_EVENTS, whose sealed blocks are reused
// oldest first with the calls' (ct_limit.c), so that events written all along never eat the
// calls' share of the file; so do the live threads' names there (ct_meta_threads.c). Before such a
// block is reused, what in it must outlive it is written again: the begins (and first milestones)
// of spans still open, and each mark name's latest mark, within a budget of an eighth of the limit,
// and each live thread's latest name (docs/design.md, "The flight recorder").
//
// Never from a hook: the writers are the drain thread and, at exit, the closing thread. The
// metadata stream's lock may be held when this stream's is taken, never the other way round.
#ifndef CT_EVENT_STREAM_H
#define CT_EVENT_STREAM_H

#include "ct_format.h"

// Appends one sized record of the kinds above.
void ct_event_stream_write(uint8_t tag, const uint8_t *body, size_t len);
// The drain thread, before it reuses `b`, a sealed block of the events stream (ct_limit.c). A
// THREAD record is carried while `name_is_current` says it is its live thread's latest name: the
// thread registry's to say (ct_meta_thread_is_current), which writes into this stream and so sits
// above it.
void ct_event_stream_carry(const struct ct_block_header *b, uint32_t block_size,
                           bool (*name_is_current)(uint32_t stream, const char *name, size_t len));
// The drain thread, after it made blocks ready again: the events stream takes one ahead, so that
// the next carry finds room even when the ring runs dry (a carry never needs more than a block).
void ct_event_stream_keep_spare(void);
// Seals the events stream's block (at exit, as the metadata's).
void ct_event_stream_close(void);
// In a fork child: the parent's blocks, lock and open spans are not ours.
void ct_event_stream_forget(void);

#endif
