// calltrace runtime: the hooks that -finstrument-functions calls.
//
// A program compiled with -finstrument-functions calls __cyg_profile_func_enter at the start and
// __cyg_profile_func_exit at the end of every instrumented function. This library implements them:
// it times every call on a per-thread stack and writes calls that took at least CALLTRACE_THRESHOLD
// into a trace file (see docs/trace-format.md and docs/design.md). Nothing here is called directly.
#ifndef CALLTRACE_RUNTIME_H
#define CALLTRACE_RUNTIME_H

#define CALLTRACE_FORMAT_VERSION 4

#ifdef __cplusplus
extern "C" {
#endif

void __cyg_profile_func_enter(void *this_fn, void *call_site);
void __cyg_profile_func_exit(void *this_fn, void *call_site);

#ifdef __cplusplus
}
#endif
#endif
