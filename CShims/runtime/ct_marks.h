// Marks and frames (CShims/include/calltrace.h): the program's named points in time and the starts
// of its frames, queued by the calling thread without a lock and written into the metadata stream
// as MARK and FRAME records by the drain thread (ct_marks.c says why).
#ifndef CT_MARKS_H
#define CT_MARKS_H

#include "ct_feature.h"

// Longest name and extra text kept, in bytes (longer ones are cut at a UTF-8 character boundary).
// calltrace.h and README.md say the same.
#define CT_MARK_NAME_MAX 127u
#define CT_MARK_EXTRA_MAX 255u

// The entry points calltrace.h calls (weak there). `extra` NULL: a mark without extra text.
void calltrace_rt_mark(const char *name, const char *extra);
void calltrace_rt_frame(void);

// The feature (ct_feature.h).
//   pass, and stop (the drain thread's last pass): the queued events into the metadata stream;
//   close (at exit): a last flush, and events after it are counted as dropped;
//   after fork: the queue held the parent's events, which are the parent's to write; the child
//     starts with an empty one.
extern const struct ct_feature ct_marks_feature;

#endif
