// Marks and frames (CShims/include/calltrace.h): the program's named points in time and the starts
// of its frames, queued by the calling thread without a lock and written into the metadata stream
// as MARK and FRAME records by the drain thread (ct_marks.c says why).
#ifndef CT_MARKS_H
#define CT_MARKS_H

#include "ct_base.h"

// Longest name and extra text kept, in bytes (longer ones are cut at a UTF-8 character boundary).
// calltrace.h and README.md say the same.
#define CT_MARK_NAME_MAX 127u
#define CT_MARK_EXTRA_MAX 255u

// The entry points calltrace.h calls (weak there). `extra` NULL: a mark without extra text.
void calltrace_rt_mark(const char *name, const char *extra);
void calltrace_rt_frame(void);

// Writes the queued events into the metadata stream. From the drain thread (every pass) and from
// the exit path, before the blocks are taken back; never from a hook.
void ct_marks_flush(void);
// The trace is closing: a last flush; events after this are counted as dropped.
void ct_marks_close(void);
// In a fork child (async-signal-safe): the queue held the parent's events, which are the parent's
// to write; the child starts with an empty one.
void ct_marks_after_fork(void);

#endif
