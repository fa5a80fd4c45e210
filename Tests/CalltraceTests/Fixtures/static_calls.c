// Static functions only the symbol table or a debug file names (a stripped binary's .dynsym has
// none of them), each on a line of its own: for debug-file and source-line tests.
// VARIANT builds a different program (another build-id, another CRC) with the same layout.
#include <stdio.h>

static volatile int sink;

__attribute__((noinline, noclone)) static int leaf_sum(int n) {
    int total = 0;
    for (int i = 0; i < n; i++) total += i;
    return total;
}

__attribute__((noinline, noclone)) static int middle_step(int n) {
#ifdef VARIANT
    sink = n * 7;
#endif
    return leaf_sum(n) + 1;
}

__attribute__((noinline, noclone)) static void outer_loop(void) {
    for (int i = 0; i < 3; i++) sink += middle_step(i + 10);
}

int main(void) {
    outer_loop();
    printf("static_calls: %d\n", sink);
    return 0;
}
