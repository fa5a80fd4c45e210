// Shared by the fixtures: sleep without being instrumented, so the trees are the same with gcc
// (which instruments inlined functions) and clang.
#ifndef FIXTURE_SLEEP_H
#define FIXTURE_SLEEP_H
#include <time.h>

__attribute__((no_instrument_function)) static inline void sleep_ms(long ms) {
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0) { }
}
#endif
