/* Call-heavy worst case: recursive fib, one tiny function per call.
 *
 * usage: fib N   -- computes fib(N) with 2*fib(N+1)-1 calls to fib().
 * fib(35) is 29,860,703 calls. `fib 1` is the start-up run (one call) whose
 * time the bench subtracts. fib() is noinline, and kept truly recursive (below), so every build
 * (uninstrumented, -finstrument-functions, XRay) makes exactly the same calls. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static long fib(int n) {
    if (n < 2) return n;
    long a = fib(n - 1);
    long b = fib(n - 2);
    /* An empty asm between the second call and the add keeps clang from
     * turning one of the two calls into a loop (accumulator recursion
     * elimination), which it does to the uninstrumented and XRay builds but
     * not to the -finstrument-functions one. */
    __asm__ volatile("" : "+r"(b));
    return a + b;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 30;
    long r = fib(n);
    /* Print so the calls cannot be optimised away. */
    printf("fib(%d) = %ld\n", n, r);
    return 0;
}
