/* hot_leaf: tiny functions called very often beside a few slow ones, for `calltrace exclude-list`.
 *
 *   hot_leaf [ROUNDS [HOT]]   (default 20000, HOT = ROUNDS)
 *
 * hot_step runs HOT times, mix ROUNDS times, each taking nanoseconds; mix_rows, whose name contains
 * "mix", runs 3 times; now_and_then is as hot but sleeps 2 ms on every 250th call (0.4 % of its
 * calls), so it is not always fast.
 * Prints a checksum that depends on every call, the same whether or not a function is traced. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) unsigned hot_step(unsigned x) { return x * 2654435761u + 1; }

__attribute__((noinline)) unsigned mix(unsigned a, unsigned b) { return (a ^ (b << 5)) + (b >> 3); }

__attribute__((noinline)) unsigned mix_rows(unsigned seed, int rows) {
    unsigned acc = seed;
    for (int i = 0; i < rows; i++) acc = mix(acc, (unsigned)i);
    return acc;
}

__attribute__((noinline)) unsigned now_and_then(unsigned x, int i) {
    if (i % 250 == 7) {
        struct timespec pause = {0, 2 * 1000 * 1000};
        while (nanosleep(&pause, &pause) != 0) {}
    }
    return x + (unsigned)i;
}

__attribute__((noinline)) unsigned run_steps(int rounds, int hot) {
    unsigned x = 1;
    for (int i = 0; i < hot; i++) x = hot_step(x);
    for (int i = 0; i < rounds; i++) x = now_and_then(x, i);
    return x;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 20000;
    int hot = argc > 2 ? atoi(argv[2]) : rounds;
    unsigned sum = run_steps(rounds, hot);
    for (int r = 0; r < 3; r++) sum += mix_rows(sum, rounds / 3);
    printf("checksum %u\n", sum);
    return 0;
}
