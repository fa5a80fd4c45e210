// A burst of calls for threshold 0: main -> burst(n) -> leaf() n times (argv[1], default 200000).
//   burst N          prints the sum (so the calls cannot be optimised away) and returns 0
//   burst N kill     ends with SIGKILL from inside burst once every leaf call returned
//   burst N threads K  K more threads run burst(N) at the same time as main (all_burst -> burst ->
//                    leaf); main prints the sum of all
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) int leaf(int x) {
    __asm__ volatile("");
    return x * 7 + 1;
}

__attribute__((noinline)) long burst(int n, int die) {
    long sum = 0;
    for (int i = 0; i < n; i++) sum += leaf(i);
    if (die) {
        printf("burst: %ld\n", sum);
        fflush(stdout);
        kill(getpid(), SIGKILL);
    }
    return sum;
}

static int calls;

__attribute__((noinline)) void *all_burst(void *sum) {
    *(long *)sum = burst(calls, 0);
    return NULL;
}

int main(int argc, char **argv) {
    calls = argc > 1 ? atoi(argv[1]) : 200000;
    int threads = argc > 3 && strcmp(argv[2], "threads") == 0 ? atoi(argv[3]) : 0;
    pthread_t ids[64];
    long sums[64] = { 0 };
    if (threads > 64) threads = 64;
    for (int i = 0; i < threads; i++) pthread_create(&ids[i], NULL, all_burst, &sums[i]);
    long sum = burst(calls, argc > 2 && strcmp(argv[2], "kill") == 0);
    for (int i = 0; i < threads; i++) {
        pthread_join(ids[i], NULL);
        sum += sums[i];
    }
    printf("burst: %ld\n", sum);
    return 0;
}
