// The flight recorder (CALLTRACE_LIMIT): a trace file that never grows past its limit. Once the
// next block would pass it, the drain thread reuses the oldest sealed block of calls or events
// instead of adding one, so the trace holds the newest calls. Metadata blocks (stream 0: modules,
// threads, muted functions) are never reused; the events stream's are, keeping what must outlive
// them (ct_event_stream.c) (docs/design.md, "The flight recorder").
//
// Only the drain thread calls these (ct_drain.c); the hooks know nothing of it.
#ifndef CT_LIMIT_H
#define CT_LIMIT_H

#include "ct_format.h"

struct ct_file;

// At trace open: `limit` bytes (0: none) for blocks of `block_size`. False when no memory could
// be had for the list of sealed blocks: then the file has no limit (with a warning).
bool ct_limit_start(uint64_t limit, uint32_t block_size);
bool ct_limit_active(void);
// The largest block size that leaves a limited file room for enough blocks (at least 64).
uint32_t ct_limit_block_size(uint64_t limit, uint32_t block_size);
// How many of `count` new blocks from file offset `off` fit below the limit (all without one).
uint64_t ct_limit_fit(uint64_t off, uint32_t block_size, uint64_t count);
// The most blocks the ring should keep ready: half of the file, so that reused blocks waiting
// in the ring (their calls already given up) cost a limited trace little of its history.
uint64_t ct_limit_ring_cap(uint64_t want);
// A block the drain thread saw sealed at `offset`, just before it unmaps it: a block of calls joins
// the queue of blocks to reuse, oldest first.
void ct_limit_sealed(const struct ct_block_header *b, uint64_t offset);
// Makes up to `count` of the oldest sealed blocks ready again and publishes them in the ring.
// Returns how many it published.
uint64_t ct_limit_reuse(struct ct_file *f, uint64_t count);
// In a fork child: the parent's blocks are not ours.
void ct_limit_forget(void);

#endif
