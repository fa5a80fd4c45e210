// longjmp and siglongjmp out of instrumented frames. The mode is argv[1]:
//
//   once        main -> protected_call -> level1 -> level2 -> level3; level3 works 12 ms and jumps
//               back to protected_call, which works 40 ms more and returns. Then final_step (15 ms).
//               Threshold 10 ms: level1..3 unwound at depths 2..4, each costing ~12 ms (up to the
//               jump, not the 40 ms after it).
//   pcall N     N iterations of an interpreter's pcall(error): protected_call(i) -> dive(i % 6)
//               recursing i % 6 times -> raise_error -> longjmp back to protected_call; then a
//               normal call ok_call(i) from main. Then final_step.
//   sigpcall N  the same with sigsetjmp(env, 1) / siglongjmp.
//   mainloop N  the jump buffer lives in main's own loop (no protected_call frame):
//               main -> dive(i % 6) -> ... -> raise_error -> longjmp to main. Then final_step.
//   chain       main -> outer [setjmp A] -> middle [setjmp B] -> inner1 -> inner2: inner2 works
//               12 ms and jumps to B; middle works 20 ms and jumps to A; outer works 30 ms and
//               returns. Then final_step. Each skipped frame costs up to the jump that left it.
//
// Prints "longjmp: <mode> <count>" and exits 0.
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sleep.h"

static jmp_buf env, outer_env;
static sigjmp_buf sigenv;
static int use_sig;
static volatile long sink;

__attribute__((noinline)) void final_step(void) { sleep_ms(15); }

__attribute__((noinline)) void level3(void) {
    sleep_ms(12);
    longjmp(env, 1);
}

__attribute__((noinline)) void level2(void) {
    level3();
    sink++;
}

__attribute__((noinline)) void level1(void) {
    level2();
    sink++;
}

__attribute__((noinline)) void raise_error(int code) {
    if (use_sig) siglongjmp(sigenv, code);
    longjmp(env, code);
}

__attribute__((noinline)) void dive(int n) {
    if (n == 0) raise_error(1);
    else dive(n - 1);
    sink++;
}

__attribute__((noinline)) int ok_call(int i) { return i * 2 + 1; }

// Returns 1 when the body raised an error.
__attribute__((noinline)) int protected_call(int i, int once) {
    if (once) {
        if (setjmp(env) == 0) {
            level1();
            return 0;
        }
        sleep_ms(40);
        return 1;
    }
    if (use_sig) {
        if (sigsetjmp(sigenv, 1) == 0) {
            dive(i % 6);
            return 0;
        }
        return 1;
    }
    if (setjmp(env) == 0) {
        dive(i % 6);
        return 0;
    }
    return 1;
}

__attribute__((noinline)) void inner2(void) {
    sleep_ms(12);
    longjmp(env, 1);
}

__attribute__((noinline)) void inner1(void) {
    inner2();
    sink++;
}

__attribute__((noinline)) void middle(void) {
    if (setjmp(env) == 0) inner1();
    sleep_ms(20);
    longjmp(outer_env, 1);
}

__attribute__((noinline)) void outer(void) {
    if (setjmp(outer_env) == 0) middle();
    sleep_ms(30);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "once";
    int n = argc > 2 ? atoi(argv[2]) : 1;
    long count = 0;
    if (strcmp(mode, "once") == 0) {
        count = protected_call(0, 1);
    } else if (strcmp(mode, "pcall") == 0 || strcmp(mode, "sigpcall") == 0) {
        use_sig = mode[0] == 's';
        for (int i = 0; i < n; i++) {
            count += protected_call(i, 0);
            sink += ok_call(i);
        }
    } else if (strcmp(mode, "mainloop") == 0) {
        for (volatile int i = 0; i < n; i++) {
            if (setjmp(env) == 0) dive(i % 6);
            else count++;
        }
    } else if (strcmp(mode, "chain") == 0) {
        outer();
        count = 1;
    } else {
        fprintf(stderr, "longjmp: unknown mode %s\n", mode);
        return 2;
    }
    final_step();
    printf("longjmp: %s %ld\n", mode, count);
    return 0;
}
