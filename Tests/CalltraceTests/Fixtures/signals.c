// Instrumented signal handlers interrupting instrumented calls. The mode is argv[1]:
//
//   storm MS     SIGALRM every 50 us (setitimer) while busy_loop() spends MS ms calling work() ->
//                leaf() (a short spin) in a loop. The handler on_alarm() calls
//                handler_work(). Then the timer stops and main calls final_step (15 ms).
//                Prints "signals: storm <signals> <work calls>".
//   slow         one SIGALRM 20 ms into long_task(), which sleeps 60 ms (uninstrumented nanosleep,
//                resumed after the signal); the handler calls slow_in_handler (15 ms).
//   slowbusy     the same, but long_task() spends its 60 ms calling tick() (instrumented) in a loop.
//   timeouts N   N times: guarded() [sigsetjmp] -> compute() -> crunch() calls step() until a 300 us
//                one-shot SIGALRM whose handler on_timeout() siglongjmps back to guarded. Then
//                final_step. Prints "signals: timeouts <N>".
//   timeout      once, with a 30 ms timer; guarded works 20 ms after the jump. Then final_step.
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include "sleep.h"

static volatile sig_atomic_t signals, timed_out;
static volatile long sink;
static int slow_handler;
static sigjmp_buf env;

__attribute__((no_instrument_function)) static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((no_instrument_function)) static void arm(long first_us, long interval_us) {
    struct itimerval it = { { interval_us / 1000000, interval_us % 1000000 },
                            { first_us / 1000000, first_us % 1000000 } };
    setitimer(ITIMER_REAL, &it, NULL);
}

// Uninstrumented work between calls, so that a threshold-0 trace stays a few hundred thousand records.
__attribute__((no_instrument_function)) static inline void spin(int n) {
    for (volatile int k = 0; k < n; k++) { }
}

__attribute__((noinline)) void final_step(void) { sleep_ms(15); }

__attribute__((noinline)) void handler_work(int n) { sink += n; }
__attribute__((noinline)) void slow_in_handler(void) { sleep_ms(15); }

__attribute__((noinline)) void on_alarm(int sig) {
    signals++;
    if (slow_handler) slow_in_handler();
    else handler_work(sig);
}

__attribute__((noinline)) long leaf(long i) {
    spin(1000);
    return i ^ (i >> 3);
}
__attribute__((noinline)) long work(long i) { return leaf(i) + 1; }

__attribute__((noinline)) long busy_loop(double ms) {
    long calls = 0;
    double end = now_ms() + ms;
    while (now_ms() < end) {
        for (int k = 0; k < 64; k++) sink += work(calls++);
    }
    return calls;
}

__attribute__((noinline)) long tick(long i) { return i + 1; }

__attribute__((noinline)) void long_task(int busy) {
    if (!busy) {
        sleep_ms(60);
        return;
    }
    double end = now_ms() + 60;
    long i = 0;
    while (now_ms() < end) sink += tick(i++);
}

__attribute__((noinline)) void on_timeout(int sig) {
    (void)sig;
    timed_out = 1;
    siglongjmp(env, 1);
}

__attribute__((noinline)) long step(long i) {
    spin(8000);
    return i * 7 + 1;
}

__attribute__((noinline)) void crunch(void) {
    for (long i = 0;; i++) sink += step(i);
}

__attribute__((noinline)) void compute(void) {
    crunch();
    sink++;
}

__attribute__((noinline)) int guarded(long timer_us, int after_ms) {
    if (sigsetjmp(env, 1) == 0) {
        arm(timer_us, 0);
        compute();
        return 0;
    }
    sleep_ms(after_ms);
    return 1;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "slow";
    int n = argc > 2 ? atoi(argv[2]) : 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    if (strcmp(mode, "storm") == 0) {
        sa.sa_handler = on_alarm;
        sa.sa_flags = SA_RESTART;
        sigaction(SIGALRM, &sa, NULL);
        arm(50, 50);
        long calls = busy_loop(n);
        arm(0, 0);
        final_step();
        printf("signals: storm %d %ld\n", (int)signals, calls);
    } else if (strcmp(mode, "slow") == 0 || strcmp(mode, "slowbusy") == 0) {
        slow_handler = 1;
        sa.sa_handler = on_alarm;
        sa.sa_flags = SA_RESTART;
        sigaction(SIGALRM, &sa, NULL);
        arm(20000, 0);
        long_task(strcmp(mode, "slowbusy") == 0);
        final_step();
        printf("signals: %s %d\n", mode, (int)signals);
    } else if (strcmp(mode, "timeouts") == 0 || strcmp(mode, "timeout") == 0) {
        sa.sa_handler = on_timeout;
        sigaction(SIGALRM, &sa, NULL);
        int once = strcmp(mode, "timeout") == 0;
        int count = 0;
        for (int i = 0; i < (once ? 1 : n); i++) count += guarded(once ? 30000 : 300, once ? 20 : 0);
        final_step();
        printf("signals: %s %d\n", mode, count);
    } else {
        fprintf(stderr, "signals: unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
