/* calltrace.h: marks and frames for calltrace (README.md, "Marks and frames").
 *
 *   #include <calltrace.h>
 *   calltrace_mark("ready");                          a named point in time, on the calling thread
 *   calltrace_mark_extra("config", "path=/etc/x");    the same, with a line of text of your own
 *   calltrace_frame();                                the start of a frame of a render or event loop
 *
 * The calls may stay in production code: a program built with a plain compiler and without the
 * calltrace runtime compiles, links and runs as before, and each call costs a load and a branch.
 * How: the runtime's entry points are declared weak; the functions below are static inline and call
 * them only when the runtime is loaded (linked by Scripts/calltrace-cc, or preloaded by `calltrace
 * record` into a position-independent executable). Arguments are evaluated either way.
 *
 * Names are cut to 127 bytes and extra text to 255 bytes (at a UTF-8 character boundary); a NULL
 * name or extra text counts as empty. The calls may come from any thread, never block and take no
 * lock, so a signal handler may call them too.
 * Scripts/calltrace-cc and calltrace-c++ put this directory on the include path. */
#ifndef CALLTRACE_H
#define CALLTRACE_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)

/* The runtime's entry points (libcalltrace_rt.so); null addresses when it is not loaded. */
extern void calltrace_rt_mark(const char *name, const char *extra) __attribute__((weak));
extern void calltrace_rt_frame(void) __attribute__((weak));

/* Never instrumented themselves: the marks must not show up as calls in the trace. */
#define CALLTRACE_INLINE_ static __inline__ __attribute__((no_instrument_function, unused))

CALLTRACE_INLINE_ void calltrace_mark(const char *name) {
    if (calltrace_rt_mark) calltrace_rt_mark(name, 0);
}

CALLTRACE_INLINE_ void calltrace_mark_extra(const char *name, const char *extra) {
    if (calltrace_rt_mark) calltrace_rt_mark(name, extra);
}

CALLTRACE_INLINE_ void calltrace_frame(void) {
    if (calltrace_rt_frame) calltrace_rt_frame();
}

#undef CALLTRACE_INLINE_

#else /* a compiler without weak symbols: the calls do nothing */

static void calltrace_mark(const char *name) { (void)name; }
static void calltrace_mark_extra(const char *name, const char *extra) { (void)name; (void)extra; }
static void calltrace_frame(void) { }

#endif

#ifdef __cplusplus
}
#endif
#endif
