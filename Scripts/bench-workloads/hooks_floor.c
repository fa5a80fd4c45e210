/* The floor of exact timing: what any tracer that times every call exactly
 * must do at least, and nothing more. rdtsc at enter and at exit, a stack of
 * start times in an initial-exec TLS array, and a compare of the duration with
 * the threshold in ticks. Nothing is recorded: calls over the threshold are
 * only counted (so the compare cannot be optimised away).
 *
 * The threshold comes from CALLTRACE_THRESHOLD like the real runtime ("10ms",
 * "500us", "0"; a bare number is ms; default 10ms), converted to ticks with a
 * short calibration at load. LD_PRELOADed; built -O2 without
 * -finstrument-functions. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#define NO_INSTRUMENT __attribute__((no_instrument_function))
#define EXPORT __attribute__((no_instrument_function, visibility("default")))
#define MAX_DEPTH 4096

static __thread uint64_t start_ticks[MAX_DEPTH] __attribute__((tls_model("initial-exec")));
static __thread uint32_t depth __attribute__((tls_model("initial-exec")));
static __thread uint64_t over __attribute__((tls_model("initial-exec")));
static uint64_t threshold_ticks;

NO_INSTRUMENT static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

NO_INSTRUMENT static uint64_t parse_threshold_ns(const char *s) {
    if (!s || !*s) return 10000000;
    char *end;
    double v = strtod(s, &end);
    if (!strcmp(end, "s")) return (uint64_t)(v * 1e9);
    if (!strcmp(end, "ms")) return (uint64_t)(v * 1e6);
    if (!strcmp(end, "us")) return (uint64_t)(v * 1e3);
    if (!strcmp(end, "ns")) return (uint64_t)v;
    return (uint64_t)(v * 1e6); /* a bare number is ms, as in the runtime */
}

__attribute__((constructor)) NO_INSTRUMENT static void floor_init(void) {
    uint64_t ns = parse_threshold_ns(getenv("CALLTRACE_THRESHOLD"));
    if (ns == 0) return;
    /* ~1ms busy calibration of ticks per ns; part of the start-up cost the
     * bench subtracts. */
    uint64_t n0 = now_ns(), t0 = __rdtsc(), n1;
    do n1 = now_ns(); while (n1 - n0 < 1000000);
    uint64_t t1 = __rdtsc();
    threshold_ticks = (uint64_t)((double)ns * (double)(t1 - t0) / (double)(n1 - n0));
}

__attribute__((destructor)) NO_INSTRUMENT static void floor_fini(void) {
    if (getenv("BENCH_FLOOR_VERBOSE"))
        fprintf(stderr, "floor: %llu calls over threshold\n", (unsigned long long)over);
}

EXPORT void __cyg_profile_func_enter(void *fn, void *site) {
    (void)fn; (void)site;
    uint32_t d = depth++;
    if (__builtin_expect(d < MAX_DEPTH, 1)) start_ticks[d] = __rdtsc();
}

EXPORT void __cyg_profile_func_exit(void *fn, void *site) {
    (void)fn; (void)site;
    uint32_t d = --depth;
    if (__builtin_expect(d < MAX_DEPTH, 1)) {
        uint64_t duration = __rdtsc() - start_ticks[d];
        if (__builtin_expect(duration >= threshold_ticks, 0)) over++;
    }
}
