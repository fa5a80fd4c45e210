// Marks and frames (CShims/include/calltrace.h): the program's named points in time and the starts
// of its frames, queued by the calling thread (ct_events.c) without a lock and written
// (ct_event_stream.c) as MARK, MARK_AT and FRAME records by the drain thread (ct_marks.c says why).
// The same queue carries the span events of ct_spans.c.
#ifndef CT_MARKS_H
#define CT_MARKS_H

#include "ct_feature.h"

// Longest name and extra text kept, in bytes (longer ones are cut at a UTF-8 character boundary).
// calltrace.h and docs/guide.md say the same.
#define CT_MARK_NAME_MAX 127u
#define CT_MARK_EXTRA_MAX 255u

// The kinds of event the queue carries; each is written as one record (docs/trace-format.md).
enum {
    CT_EVENT_MARK = 1,
    CT_EVENT_FRAME = 2,
    CT_EVENT_MARK_AT = 3,     // value: the caller's CLOCK_MONOTONIC ns
    CT_EVENT_SPAN_BEGIN = 4,  // value: the span's id
    CT_EVENT_SPAN_POINT = 5,
    CT_EVENT_SPAN_END = 6,
};

// The queue's part of the gate every event passes before it queues (ct_events_accepting, once the
// runtime is set up): false when the event goes nowhere (nothing records, or the trace closed: then
// counted).
bool ct_marks_accepting(void);
// An event from before the runtime was set up (another thread was setting it up): counted.
void ct_marks_drop_early(void);
// Queues one event of the calling thread, timed now, without a lock; `name` and `extra` are cut as
// marks' are (only the kinds that have them keep them). False when the queue was full (counted).
bool ct_events_queue(uint8_t kind, uint64_t value, const char *name, const char *extra);

// The feature (ct_feature.h).
//   pass, and stop (the drain thread's last pass): the queued events written (ct_event_stream.c);
//   close (at exit): a last flush, and events after it are counted as dropped;
//   after fork: the queue held the parent's events, which are the parent's to write; the child
//     starts with an empty one.
extern const struct ct_feature ct_marks_feature;

#endif
