// The program's events as calltrace.h hands them over: marks and frames (ct_events.c), spans
// (ct_spans.c). Entry points: each call passes one gate, which starts the runtime when a
// constructor calls before the runtime's own has run, then queues its event (ct_marks.h).
#ifndef CT_EVENTS_H
#define CT_EVENTS_H

#include "ct_base.h"

// The entry points calltrace.h calls (weak there). `extra` NULL: a mark without extra text.
void calltrace_rt_mark(const char *name, const char *extra);
void calltrace_rt_mark_at(const char *name, const char *extra, uint64_t monotonic_ns);
void calltrace_rt_frame(void);

// Everything a call does before it queues (starts the runtime when a constructor calls first):
// false when the event goes nowhere (nothing records, or the trace closed: then counted).
bool ct_events_accepting(void);

#endif
