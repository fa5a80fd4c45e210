#include "ct_events.h"
#include "ct_marks.h"
#include "ct_runtime.h"
#include "ct_start.h"

CT_NO_INSTRUMENT bool ct_events_accepting(void) {
    if (CT_UNLIKELY(atomic_load_explicit(&ct_rt.init, memory_order_acquire) != CT_INIT_DONE)) {
        // Before the runtime's own constructor (another library's constructor): start it now, so
        // that the tick is on the trace's clock. False while another thread is starting it.
        if (!ct_runtime_init()) {
            ct_marks_drop_early();
            return false;
        }
    }
    return ct_marks_accepting();
}

CT_EXPORT CT_NO_INSTRUMENT void calltrace_rt_mark(const char *name, const char *extra) {
    if (ct_events_accepting()) ct_events_queue(CT_EVENT_MARK, 0, name, extra);
}

CT_EXPORT CT_NO_INSTRUMENT void calltrace_rt_mark_at(const char *name, const char *extra, uint64_t monotonic_ns) {
    if (ct_events_accepting()) ct_events_queue(CT_EVENT_MARK_AT, monotonic_ns, name, extra);
}

CT_EXPORT CT_NO_INSTRUMENT void calltrace_rt_frame(void) {
    if (ct_events_accepting()) ct_events_queue(CT_EVENT_FRAME, 0, NULL, NULL);
}
