// C++ exceptions thrown through instrumented frames. The mode is argv[1]:
//
//   once        main -> guarded -> level1 -> level2 -> level3; level3 works 12 ms and throws; guarded
//               catches and works 40 ms. Then final_step (15 ms). Threshold 10 ms: level1..3 at
//               depths 2..4, each costing ~12 ms (up to the throw, not the 40 ms after it).
//   loop N      N iterations of guarded_dive(i) -> dive(i % 6) recursing i % 6 times -> thrower,
//               caught in guarded_dive; then a normal call ok_call(i) from main. Then final_step.
//   middle      main -> outer -> middle -> r(5) ... r(0) throws; middle catches and calls
//               after_catch (15 ms); outer then calls sibling (15 ms). Then final_step.
//   rethrow     main -> top -> mid -> leaf; leaf works 12 ms and throws; mid catches, works 20 ms
//               and rethrows (`throw;`); top catches and works 40 ms. Then final_step.
//   raii        like once, but level2 holds a Guard whose destructor (an instrumented call) works
//               11 ms while the exception passes through level2.
//
// Prints "exceptions: <mode> <caught>" and exits 0.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include "sleep.h"

static volatile long sink;

__attribute__((noinline)) void final_step() { sleep_ms(15); }

struct Guard {
    __attribute__((noinline)) ~Guard() { sleep_ms(11); }
};

__attribute__((noinline)) void level3() {
    sleep_ms(12);
    throw std::runtime_error("level3");
}

__attribute__((noinline)) void level2(bool raii) {
    if (raii) {
        Guard g;
        level3();
        sink++;
    } else {
        level3();
        sink++;
    }
}

__attribute__((noinline)) void level1(bool raii) {
    level2(raii);
    sink++;
}

__attribute__((noinline)) int guarded(bool raii) {
    try {
        level1(raii);
    } catch (const std::exception &) {
        sleep_ms(40);
        return 1;
    }
    return 0;
}

__attribute__((noinline)) void thrower(int i) { throw i; }

__attribute__((noinline)) void dive(int n, int i) {
    if (n == 0) thrower(i);
    else dive(n - 1, i);
    sink++;
}

__attribute__((noinline)) int guarded_dive(int i) {
    try {
        dive(i % 6, i);
    } catch (int) {
        return 1;
    }
    return 0;
}

__attribute__((noinline)) int ok_call(int i) { return i * 2 + 1; }

__attribute__((noinline)) void r(int n) {
    if (n == 0) throw 5;
    r(n - 1);
    sink++;
}

__attribute__((noinline)) void after_catch() { sleep_ms(15); }
__attribute__((noinline)) void sibling() { sleep_ms(15); }

__attribute__((noinline)) int middle() {
    int caught = 0;
    try {
        r(5);
    } catch (int) {
        caught = 1;
    }
    after_catch();
    return caught;
}

__attribute__((noinline)) int outer() {
    int caught = middle();
    sibling();
    return caught;
}

__attribute__((noinline)) void leaf() {
    sleep_ms(12);
    throw 3;
}

__attribute__((noinline)) void mid() {
    try {
        leaf();
    } catch (int) {
        sleep_ms(20);
        throw;
    }
}

__attribute__((noinline)) int top() {
    try {
        mid();
    } catch (int) {
        sleep_ms(40);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "once";
    int n = argc > 2 ? atoi(argv[2]) : 1;
    long caught = 0;
    if (strcmp(mode, "once") == 0 || strcmp(mode, "raii") == 0) {
        caught = guarded(mode[0] == 'r');
    } else if (strcmp(mode, "loop") == 0) {
        for (int i = 0; i < n; i++) {
            caught += guarded_dive(i);
            sink += ok_call(i);
        }
    } else if (strcmp(mode, "middle") == 0) {
        caught = outer();
    } else if (strcmp(mode, "rethrow") == 0) {
        caught = top();
    } else {
        fprintf(stderr, "exceptions: unknown mode %s\n", mode);
        return 2;
    }
    final_step();
    printf("exceptions: %s %ld\n", mode, caught);
    return 0;
}
