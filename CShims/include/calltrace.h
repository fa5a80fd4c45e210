/* calltrace.h: marks, frames and spans for calltrace (docs/guide.md, "A launch", "A render loop").
 *
 *   #include <calltrace.h>
 *   calltrace_mark("ready");                          a named point in time, on the calling thread
 *   calltrace_mark_extra("config", "path=/etc/x");    the same, with a line of text of your own
 *   calltrace_mark_at("sent", NULL, t);               a point at a CLOCK_MONOTONIC time t (ns) you took
 *   calltrace_frame();                                the start of a frame of a render or event loop
 *
 *   uint64_t s = calltrace_span_begin("open document", "path=a.txt");   an interval begins (extra may be NULL)
 *   calltrace_span_point(s, "parsed");                a milestone inside it
 *   calltrace_span_end(s);                            it ends, on this thread or any other
 *
 * A span may overlap or nest others and may never end (it is shown unfinished). Its id is unique
 * in the process; 0 when nothing records, and the span calls accept 0 and do nothing. A fork child
 * has none of its parent's open spans: ending one there does nothing.
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

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)

/* The runtime's entry points (libcalltrace_rt.so); null addresses when it is not loaded. */
extern void calltrace_rt_mark(const char *name, const char *extra) __attribute__((weak));
extern void calltrace_rt_frame(void) __attribute__((weak));
extern void calltrace_rt_mark_at(const char *name, const char *extra, uint64_t monotonic_ns) __attribute__((weak));
extern uint64_t calltrace_rt_span_begin(const char *name, const char *extra) __attribute__((weak));
extern void calltrace_rt_span_point(uint64_t span, const char *name) __attribute__((weak));
extern void calltrace_rt_span_end(uint64_t span) __attribute__((weak));

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

CALLTRACE_INLINE_ void calltrace_mark_at(const char *name, const char *extra, uint64_t monotonic_ns) {
    if (calltrace_rt_mark_at) calltrace_rt_mark_at(name, extra, monotonic_ns);
}

CALLTRACE_INLINE_ uint64_t calltrace_span_begin(const char *name, const char *extra) {
    return calltrace_rt_span_begin ? calltrace_rt_span_begin(name, extra) : 0;
}

CALLTRACE_INLINE_ void calltrace_span_point(uint64_t span, const char *name) {
    if (span && calltrace_rt_span_point) calltrace_rt_span_point(span, name);
}

CALLTRACE_INLINE_ void calltrace_span_end(uint64_t span) {
    if (span && calltrace_rt_span_end) calltrace_rt_span_end(span);
}

#undef CALLTRACE_INLINE_

#else /* a compiler without weak symbols: the calls do nothing */

static void calltrace_mark(const char *name) { (void)name; }
static void calltrace_mark_extra(const char *name, const char *extra) { (void)name; (void)extra; }
static void calltrace_frame(void) { }
static void calltrace_mark_at(const char *name, const char *extra, uint64_t monotonic_ns) {
    (void)name; (void)extra; (void)monotonic_ns;
}
static uint64_t calltrace_span_begin(const char *name, const char *extra) { (void)name; (void)extra; return 0; }
static void calltrace_span_point(uint64_t span, const char *name) { (void)span; (void)name; }
static void calltrace_span_end(uint64_t span) { (void)span; }

#endif

#ifdef __cplusplus
}
#endif
#endif
