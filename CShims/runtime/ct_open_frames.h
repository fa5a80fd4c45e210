// The open calls of every recording thread, as the drain thread sees them. Muting (ct_mute.c)
// patches a function's exit hooks only once no thread has a call of it open, so that a call that
// was running when its function was muted still ends through its exit hook, at its real end
// (docs/design.md, "The moment of muting"). A call whose entry handler was running then and has not
// published its frame yet is not seen here: its handler takes the frame back (ct_stack_take_back).
//
// Threads are listed while they record (from their first recorded call to their end); the list is
// guarded by a mutex that a program thread takes only twice in its life, and the drain thread
// while it reads the stacks (a few microseconds).
#ifndef CT_OPEN_FRAMES_H
#define CT_OPEN_FRAMES_H

#include "ct_base.h"

struct ct_thread;

// A thread starts recording, or ends (from the thread itself, while its stack is still there).
void ct_open_frames_add(struct ct_thread *t);
void ct_open_frames_remove(struct ct_thread *t);
// In a fork child: the other threads are gone; `self` (which keeps its open calls) is the list.
void ct_open_frames_after_fork(struct ct_thread *self);
// Calls `visit` with the function of each open call of each listed thread. Another thread may
// push and pop meanwhile: a call open throughout the visit is always seen. False when some
// recording thread could not be listed (more than CT_OPEN_FRAMES_MAX at once): then no function
// can be said to have no open call.
bool ct_open_frames_visit(void (*visit)(uintptr_t fn, void *context), void *context);
// Each listed thread's id and the start tick of its outermost open call (0: none open), at most
// `cap` of them, under one hold of the list's lock: the thread-state sampler looks only at
// threads inside a long call (ct_sched.c). Returns how many were written.
struct ct_open_frames_oldest { uint64_t tid, start; };
uint32_t ct_open_frames_oldest_starts(struct ct_open_frames_oldest *out, uint32_t cap);
// Calls `visit` with each listed thread, and takes it off the list: every program thread is gone
// (ct_raw_exit.c), and none will take itself off.
void ct_open_frames_take_all(void (*visit)(struct ct_thread *t, void *context), void *context);

#endif
