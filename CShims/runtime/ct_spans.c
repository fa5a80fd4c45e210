// Spans: calltrace_span_begin / calltrace_span_point / calltrace_span_end (calltrace.h).
//
// A span is an id and the events about it; the runtime keeps no table of open spans. That is what
// lets a span end on another thread than the one that began it, overlap or nest others, and never
// end, at the cost of a mark per event and no lock: each event is queued like a mark (ct_marks.c)
// and written by the drain thread, and the reader pairs a SPAN_BEGIN with its SPAN_END by id. A
// begin without an end is a span still open when the trace closed (the reader calls it unfinished).
//
// Ids count up from 1 in the process, from one atomic counter: unique however many threads begin
// spans. A fork child inherits the counter but none of the parent's open spans: their SPAN_BEGIN
// records are in the parent's trace, so an end or milestone the child gives one of them has no
// begin in the child's trace and the reader ignores it (docs/trace-format.md). A begin that cannot
// be queued (the queue is full: counted, as marks are) returns 0, so its milestones and end, which
// would have nothing to attach to, cost nothing either.
#include "ct_spans.h"
#include "ct_events.h"
#include "ct_marks.h"

#include <stdatomic.h>

static _Atomic uint64_t last_id;

CT_EXPORT CT_NO_INSTRUMENT uint64_t calltrace_rt_span_begin(const char *name, const char *extra) {
    if (!ct_events_accepting()) return 0;
    uint64_t id = atomic_fetch_add_explicit(&last_id, 1, memory_order_relaxed) + 1;
    return ct_events_queue(CT_EVENT_SPAN_BEGIN, id, name, extra) ? id : 0;
}

CT_EXPORT CT_NO_INSTRUMENT void calltrace_rt_span_point(uint64_t span, const char *name) {
    if (span && ct_events_accepting()) ct_events_queue(CT_EVENT_SPAN_POINT, span, name, NULL);
}

CT_EXPORT CT_NO_INSTRUMENT void calltrace_rt_span_end(uint64_t span) {
    if (span && ct_events_accepting()) ct_events_queue(CT_EVENT_SPAN_END, span, NULL, NULL);
}
