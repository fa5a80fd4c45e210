// What sleds must leave as it was (SledTests). argv[1] picks one:
//   bytes      prints the first two bytes of probe(), a function with sleds: "eb09" while its entry
//              sled jumps over itself (unpatched), "68.." once patched (push $id)
//   vectors N  N rounds of calls that pass and return doubles, AVX vectors (__m256d) and long
//              doubles (x87), through instrumented functions whose calls all take the sleds'
//              slow paths at threshold 0; prints a checksum, which must be the untraced one
//   registers N  N rounds of a caller that keeps values live across calls of leaves it knows (gcc's
//              IPA-RA lets it keep them in registers those leaves leave alone): a checksum
//   tails      tail calls (at -O2, with sibling calls on): direct, through a function pointer, a chain
//              of three, and to a libc function; each of about 12 ms:
//                direct_head -> direct_tail, pointer_head -> pointer_tail,
//                chain_a -> chain_b -> chain_c, sleeper -> usleep
//   workers N  two worker threads (not recorded by default) call hot() N times each, while main
//              calls slow_main() (25 ms): hot is muted for them; prints a checksum
//   inner N    a recursion whose outer call holds N fast inner calls, as an interpreter's call path
//              does (a callback into the interpreter): eval(N) calls eval(0) N times. Then the same
//              code without instrumentation, eval_plain(N), timed by the fixture: "untraced_ns T"
//              on stderr
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "sleep.h"

__attribute__((noinline)) int probe(int x) { return x * 3 + 1; }

// ---- vectors ------------------------------------------------------------------------------------
__attribute__((noinline, target("avx2"))) __m256d vec_mix(__m256d a, __m256d b, double k) {
    return _mm256_add_pd(_mm256_mul_pd(a, _mm256_set1_pd(k)), b);
}
__attribute__((noinline)) long double ext_mix(long double a, long double b) { return a * 1.0000001L + b; }
__attribute__((noinline)) double dbl_mix(double a, double b, double c, double d, double e, double f, double g,
                                         double h) {
    return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}

__attribute__((noinline, target("avx2"))) static double vectors(long n) {
    __m256d acc = _mm256_set_pd(1, 2, 3, 4), step = _mm256_set_pd(0.5, 0.25, 0.125, 0.0625);
    long double ext = 1.0L;
    double d = 0;
    for (long i = 0; i < n; i++) {
        acc = vec_mix(acc, step, 0.999);
        ext = ext_mix(ext, (long double)i);
        d += dbl_mix(i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7) * 1e-9;
    }
    double lanes[4];
    _mm256_storeu_pd(lanes, acc);
    return lanes[0] + lanes[1] + lanes[2] + lanes[3] + (double)(ext * 1e-12L) + d;
}

// ---- registers ----------------------------------------------------------------------------------
static volatile unsigned long sink;
__attribute__((noinline)) unsigned long leaf_a(unsigned long x) { return x * 2654435761u + 1; }
__attribute__((noinline)) unsigned long leaf_b(unsigned long x) { return (x ^ (x >> 7)) + 3; }

__attribute__((noinline)) static unsigned long registers(long n) {
    unsigned long a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8;
    for (long i = 0; i < n; i++) {
        a += leaf_a(a + (unsigned long)i);
        b ^= leaf_b(a) + c;
        c += leaf_a(b) ^ d;
        d ^= leaf_b(c) + e;
        e += leaf_a(d) ^ f;
        f ^= leaf_b(e) + g;
        g += leaf_a(f) ^ h;
        h ^= leaf_b(g) + a;
    }
    return a + b + c + d + e + f + g + h;
}

// ---- tails --------------------------------------------------------------------------------------
__attribute__((noinline)) void direct_tail(int ms) { sleep_ms(ms); }
__attribute__((noinline)) void direct_head(int ms) { direct_tail(ms); }

__attribute__((noinline)) void pointer_tail(int ms) { sleep_ms(ms); }
static void (*volatile pointer_target)(int) = pointer_tail;
__attribute__((noinline)) void pointer_head(int ms) { pointer_target(ms); }

__attribute__((noinline)) void chain_c(int ms) { sleep_ms(ms); }
__attribute__((noinline)) void chain_b(int ms) { chain_c(ms); }
__attribute__((noinline)) void chain_a(int ms) { chain_b(ms); }

__attribute__((noinline)) int sleeper(int ms) { return usleep((useconds_t)ms * 1000); }

// ---- workers ------------------------------------------------------------------------------------
__attribute__((noinline)) unsigned long hot(unsigned long x) { return x * 31 + 7; }

static long worker_calls;
static void *worker(void *arg) {
    unsigned long x = (unsigned long)(uintptr_t)arg;
    for (long i = 0; i < worker_calls; i++) x = hot(x);
    return (void *)(uintptr_t)x;
}

__attribute__((noinline)) void slow_main(void) { sleep_ms(25); }

// ---- inner --------------------------------------------------------------------------------------
static volatile unsigned long steps;
static volatile long zero; // a constant would let gcc call a copy of eval made for it (eval.constprop.0)
__attribute__((noinline)) void eval(long n) {
    if (n == 0) {
        steps = steps * 3 + 1;
        return;
    }
    for (long i = 0; i < n; i++) eval(zero);
}
__attribute__((noinline, no_instrument_function)) static void eval_plain(long n) {
    if (n == 0) {
        steps = steps * 3 + 1;
        return;
    }
    for (long i = 0; i < n; i++) eval_plain(zero);
}
__attribute__((no_instrument_function)) static long long ns_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000 + t.tv_nsec;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "bytes";
    long n = argc > 2 ? atol(argv[2]) : 1000;
    if (strcmp(mode, "bytes") == 0) {
        const unsigned char *code = (const unsigned char *)(uintptr_t)probe;
        printf("%02x%02x %d\n", code[0], code[1], probe(2));
    } else if (strcmp(mode, "vectors") == 0) {
        printf("vectors %.6f\n", vectors(n));
    } else if (strcmp(mode, "registers") == 0) {
        printf("registers %lu\n", registers(n));
    } else if (strcmp(mode, "tails") == 0) {
        direct_head(12);
        pointer_head(12);
        chain_a(12);
        printf("tails %d\n", sleeper(12));
    } else if (strcmp(mode, "inner") == 0) {
        eval(n);
        long long best = -1;
        for (int round = 0; round < 3; round++) {
            long long t0 = ns_now();
            eval_plain(n);
            long long ns = ns_now() - t0;
            if (best < 0 || ns < best) best = ns;
        }
        fprintf(stderr, "untraced_ns %lld\n", best);
        printf("inner %lu\n", steps);
    } else if (strcmp(mode, "workers") == 0) {
        worker_calls = n;
        pthread_t threads[2];
        for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, worker, (void *)(uintptr_t)(i + 1));
        slow_main();
        unsigned long sum = 0;
        for (int i = 0; i < 2; i++) {
            void *result;
            pthread_join(threads[i], &result);
            sum += (unsigned long)(uintptr_t)result;
        }
        printf("workers %lu\n", sum);
    }
    sink = 0;
    return 0;
}
