// A function with a large uninitialised local array whose stack area holds stale copies of its own
// return address (threshold 0 or 1 ms). caller(n) recurses first and calls big() from the same
// call site at every level on the way back, so each deeper big() leaves its return address in a
// stack word that the next, shallower big()'s array covers. big() calls an instrumented helper that
// gcc inlines (and instruments with big's call site) before and after filling the array. Every call
// returns normally:
//   main -> caller(8) -> caller(7) ... caller(0); each caller(n) -> big(n) -> helper, helper
#include <stdio.h>
#include <string.h>
#include "sleep.h"

volatile int sink;

static inline void helper(int x) { sink += x; }

__attribute__((noinline)) void big(int level) {
    char buf[24576];
    helper(level);                // before the array is filled: its words are stale
    char *volatile fill = buf;    // the fill cannot be optimised away
    memset(fill, level + 1, sizeof buf);
    sleep_ms(1);
    helper(fill[level * 1000]);   // after: the stale copies are gone
}

__attribute__((noinline)) void caller(int n) {
    if (n > 0) caller(n - 1);
    big(n);
    sink += n;
}

int main(void) {
    caller(8);
    printf("staleslot: %d\n", sink);
    return 0;
}
