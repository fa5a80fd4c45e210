// Spans (CShims/include/calltrace.h): intervals the program names, with milestones, begun and
// ended on any threads. Their events travel through the marks' queue (ct_marks.c) and are written
// as SPAN_BEGIN, SPAN_POINT and SPAN_END records; ct_spans.c says why ids look as they do.
#ifndef CT_SPANS_H
#define CT_SPANS_H

#include "ct_base.h"

// The entry points calltrace.h calls (weak there). 0 is no span: returned when nothing records
// (or the begin could not be queued), and accepted, doing nothing, by point and end.
uint64_t calltrace_rt_span_begin(const char *name, const char *extra);
void calltrace_rt_span_point(uint64_t span, const char *name);
void calltrace_rt_span_end(uint64_t span);

#endif
