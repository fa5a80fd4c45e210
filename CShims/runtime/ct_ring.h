// The ring of ready blocks between the drain thread (the only producer) and the recording threads.
//
// A recording thread that fills its block takes the next one with one CAS on `taken`: no lock, no
// syscall, async-signal-safe. When the ring runs low the taker wakes the drain thread, once per
// shortage rather than once per call (`wake_pending`), so a burst of drops costs no syscall per
// record. When it is empty the taker gets NULL and drops its record; only while the first blocks
// are deferred (ct_ring_defer_first) does a stream of calls wait for them, bounded.
//
// Spare blocks: a thread that ends leaves its partly used block here, and the next thread that
// needs a block continues it (after a SEGMENT record), so many short-lived threads do not cost a
// block each.
#ifndef CT_RING_H
#define CT_RING_H

#include "ct_format.h"

// Recording side (lock-free, async-signal-safe).
struct ct_block_header *ct_ring_take(void);
// The same for a stream of calls, which holds no lock: while the first blocks are deferred, it
// waits for them (the metadata stream's writer, which holds its lock, takes the spare or drops).
struct ct_block_header *ct_ring_take_for_calls(void);
uint32_t ct_ring_block_size(void);
// Why the ring is empty, as CT_LOST_* bits: the drain thread's last failure, or CT_LOST_RING_EMPTY
// together with what kept the ring short of the blocks the drain thread wanted (ct_ring_set_short).
uint32_t ct_ring_starved_reason(void);
// Leaves a partly used block for another writer. False when there is no room: seal it instead.
bool ct_ring_leave_spare(struct ct_block_header *b);
struct ct_block_header *ct_ring_take_spare(void);

// Drain side: the drain thread is the only caller of these (and start-up, before it runs).
void ct_ring_init(uint32_t block_size, uint32_t capacity);
uint32_t ct_ring_capacity(void);
uint64_t ct_ring_published(void);                    // blocks published so far (they only grow)
void ct_ring_publish(struct ct_block_header *b, uint64_t offset);
void ct_ring_set_starved(uint32_t reason);           // 0: the drain thread refilled the ring
// A trace at a threshold opens with one block (the metadata stream's); three spares follow a little
// later, the rest later still, off the program's start path (docs/design.md, "Start-up"). Until
// ct_ring_first_ready, a stream of calls that finds the ring empty asks and waits for them.
void ct_ring_defer_first(void);
bool ct_ring_first_deferred(void);
void ct_ring_first_ready(void);
// The spares came (after the opening thread went on): a stream of calls waiting for the first
// blocks takes one of them rather than wait for the rest.
void ct_ring_spares_ready(void);
// Waits as such a stream does, taking nothing: the opener, before records that may need a second
// block of the metadata stream, whose writer holds its lock and never waits.
void ct_ring_wait_for_first(void);
// The calling thread (the drain thread) never waits in ct_ring_take; when it finds the ring empty
// itself (its own metadata: the opener's records, marks), `make` (may be NULL) makes the blocks it
// put off, and true says there are more.
void ct_ring_never_wait_here(bool (*make)(void));
// A stream of calls found the ring empty while the first blocks were deferred, and waits.
bool ct_ring_first_wanted(void);
// The drain thread got fewer blocks than it asked for, for `reason` (a CT_LOST_* bit: a file system
// without room for the whole batch), or all of them (0): a burst that outruns the ring meanwhile
// loses records to that too, and the trace names it.
void ct_ring_set_short(uint32_t reason);
bool ct_ring_is_starved(void);
uint64_t ct_ring_taken_count(void);                  // blocks taken so far (they only grow)
struct ct_block_header *ct_ring_slot(uint64_t index, uint64_t *offset);  // the index-th block published
// Takes every waiting block out of reach of the takers (at exit); returns [*first, *end).
void ct_ring_claim_all(uint64_t *first, uint64_t *end);
// Sleeps until a taker asks for blocks (or anyone calls ct_ring_wake) after the wake count was
// `seen`, or until `timeout_ns` passes.
uint32_t ct_ring_wake_count(void);
void ct_ring_wait(uint32_t seen, uint64_t timeout_ns);
void ct_ring_wake(void);
// In a forked child: the parent's blocks are not ours.
void ct_ring_forget(void);

#endif
