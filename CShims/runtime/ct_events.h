// The program's events: marks, frames, span events (ct_marks.c), run delays (ct_sched.c) and
// hangs (ct_hang.c). They go into the metadata stream; in a flight recorder's trace
// (CALLTRACE_LIMIT) into a stream of their own, CT_STREAM_EVENTS, whose sealed blocks are reused
// oldest first like the calls' (ct_limit.c), so that events written all along never eat the
// calls' share of the file. Before such a block is reused, what in it must outlive it is written
// again: the begins and milestones of spans still open, and each mark name's latest mark
// (docs/design.md, "The flight recorder").
//
// Never from a hook: the writers are the drain thread and, at exit, the closing thread.
#ifndef CT_EVENTS_H
#define CT_EVENTS_H

#include "ct_format.h"

// Appends one sized record of the kinds above.
void ct_events_write(uint8_t tag, const uint8_t *body, size_t len);
// The drain thread, before it reuses `b`, a sealed block of the events stream (ct_limit.c).
void ct_events_carry(const struct ct_block_header *b, uint32_t block_size);
// Seals the events stream's block (at exit, as the metadata's).
void ct_events_close(void);
// In a fork child: the parent's block, lock and open spans are not ours.
void ct_events_forget(void);

#endif
