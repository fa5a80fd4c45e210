// A call preempted on purpose. The main thread and a busy sibling thread (not instrumented, and not
// recorded: CALLTRACE_THREADS=main) are pinned to one CPU, so `busy`, which needs CPU_MS of CPU,
// takes about twice that. Then `rest` sleeps SLEEP_MS while the sibling still spins: its wall time
// is sleep, not run delay.
//
// Usage: preempt CPU_MS SLEEP_MS [thread]. Prints "busy cpu=X wall=Y" (ms, its own clocks) on
// stdout. With `thread`, `busy` and `rest` run in a second instrumented thread, `worker`, on the
// same CPU (recorded with CALLTRACE_THREADS=all).
#define _GNU_SOURCE
#include "sleep.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static atomic_int stop, spinning;
static cpu_set_t one_cpu;

__attribute__((no_instrument_function)) static double now_ms(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((no_instrument_function)) static void *spin(void *arg) {
    (void)arg;
    sched_setaffinity(0, sizeof one_cpu, &one_cpu);
    atomic_store(&spinning, 1);
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) { }
    return NULL;
}

__attribute__((noinline)) void busy(double cpu_ms) {
    double start = now_ms(CLOCK_THREAD_CPUTIME_ID);
    while (now_ms(CLOCK_THREAD_CPUTIME_ID) - start < cpu_ms) { }
}

__attribute__((noinline)) void rest(long ms) { sleep_ms(ms); }

static double cpu_ms = 40;
static long sleep_ms_arg = 100;
static double busy_cpu, busy_wall;

__attribute__((noinline)) void *work(void *arg) {
    (void)arg;
    double wall0 = now_ms(CLOCK_MONOTONIC), cpu0 = now_ms(CLOCK_THREAD_CPUTIME_ID);
    busy(cpu_ms);
    busy_wall = now_ms(CLOCK_MONOTONIC) - wall0;
    busy_cpu = now_ms(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    rest(sleep_ms_arg);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1) cpu_ms = atof(argv[1]);
    if (argc > 2) sleep_ms_arg = atol(argv[2]);
    int in_thread = argc > 3 && argv[3][0] == 't';
    // The first CPU this process may run on.
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 2;
    int cpu = 0;
    while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &allowed)) cpu++;
    CPU_ZERO(&one_cpu);
    CPU_SET(cpu, &one_cpu);
    if (sched_setaffinity(0, sizeof one_cpu, &one_cpu) != 0) return 2;
    pthread_t sibling;
    if (pthread_create(&sibling, NULL, spin, NULL) != 0) return 2;
    while (!atomic_load(&spinning)) sched_yield();
    if (in_thread) {
        pthread_t worker; // on the same CPU: it inherits the affinity
        if (pthread_create(&worker, NULL, work, NULL) != 0) return 2;
        pthread_join(worker, NULL);
    } else {
        work(NULL);
    }
    atomic_store(&stop, 1);
    pthread_join(sibling, NULL);
    printf("busy cpu=%.3f wall=%.3f\n", busy_cpu, busy_wall);
    return 0;
}
