// Two calls whose costs are exact lower bounds, for `check --baseline` (RegressionGateTests):
//   main
//     setup       >= 50 ms, whatever the arguments
//     compress    >= argv[1] ms (default 100)
// so runs at 100 and 150 differ by +50% in compress alone.
#include <stdlib.h>
#include "sleep.h"

__attribute__((noinline)) void setup(void) { sleep_ms(50); }

__attribute__((noinline)) void compress(long ms) { sleep_ms(ms); }

int main(int argc, char **argv) {
    setup();
    compress(argc > 1 ? atol(argv[1]) : 100);
    return 0;
}
