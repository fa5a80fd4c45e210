/* many_calls: as many calls as asked, quickly, for the memory of views that stream.
 *
 *   many_calls [ROUNDS]   (default 1000)
 *
 * main calls step ROUNDS times, each step calls leaf twice: 3 x ROUNDS calls under main, at
 * depths 1 and 2. Prints a checksum so that no call is optimised away. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) unsigned leaf(unsigned x) { return x * 2654435761u + 1; }

__attribute__((noinline)) unsigned step(unsigned x) { return leaf(x) ^ leaf(x + 7); }

int main(int argc, char **argv) {
    long rounds = argc > 1 ? atol(argv[1]) : 1000;
    unsigned sum = 0;
    for (long i = 0; i < rounds; i++) sum += step((unsigned)i);
    printf("checksum %u\n", sum);
    return 0;
}
