// Recursion far deeper than the runtime's stack capacity (CALLTRACE_MAX_DEPTH, 4096 by default).
// Needs a big machine stack: run it under `ulimit -s 1048576` or so (200,000 frames take ~30 MB).
// The mode is argv[1], the depth argv[2] (default 200000):
//
//   return N        main -> descend(N) ... descend(0), which works 15 ms and returns all the way.
//   jump N          descend(0) works 15 ms and longjmps to protected_call (depth 1), which works
//                   20 ms more.
//   jumpmid N M     descend(0) works 15 ms and longjmps to the descend call at depth M (M may be
//                   beyond the capacity), which works 20 ms and returns normally all the way.
//
// Then main calls shallow(), a tiny call, 1000 times and final_step (15 ms). Checks the machine stack
// is big enough first (exit 3 if not). Prints "deep: <mode> <N>" and exits 0.
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "sleep.h"

static jmp_buf env;
static int jump_to_top;
static long land_at = -1;   // the descend(n) with n == land_at holds the jump buffer
static volatile long sink;

__attribute__((noinline)) void final_step(void) { sleep_ms(15); }
__attribute__((noinline)) int shallow(int i) { return i + 1; }

__attribute__((noinline)) long descend(long n) {
    volatile char pad[64];  // a frame of a realistic size, and no tail call
    pad[n % 64] = (char)n;
    if (n == land_at) {
        if (setjmp(env) == 0) {
            descend(n - 1);
        } else {
            sleep_ms(20);
        }
        return pad[n % 64];
    }
    if (n == 0) {
        sleep_ms(15);
        if (jump_to_top || land_at >= 0) longjmp(env, 1);
        return 0;
    }
    long r = descend(n - 1) + pad[n % 64];
    sink += r;
    return r;
}

__attribute__((noinline)) int protected_call(long n) {
    if (setjmp(env) == 0) {
        descend(n);
        return 0;
    }
    sleep_ms(20);
    return 1;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "return";
    long n = argc > 2 ? atol(argv[2]) : 200000;
    struct rlimit rl;
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < (rlim_t)n * 256) {
        fprintf(stderr, "deep: a stack of %ld bytes is too small for %ld frames (ulimit -s)\n",
                (long)rl.rlim_cur, n);
        return 3;
    }
    if (strcmp(mode, "return") == 0) {
        descend(n);
    } else if (strcmp(mode, "jump") == 0) {
        jump_to_top = 1;
        protected_call(n);
    } else if (strcmp(mode, "jumpmid") == 0) {
        long m = argc > 3 ? atol(argv[3]) : 100;
        land_at = n - (m - 1);   // main is depth 0, descend(n) depth 1
        descend(n);
    } else {
        fprintf(stderr, "deep: unknown mode %s\n", mode);
        return 2;
    }
    for (int i = 0; i < 1000; i++) sink += shallow(i);
    final_step();
    printf("deep: %s %ld\n", mode, n);
    return 0;
}
