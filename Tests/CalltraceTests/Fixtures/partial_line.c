// partial_line (threshold 10 ms): main -> slow_step (12 ms), then writes "no newline at the end" to
// stderr without a final newline, so that whatever comes after on stderr would continue its line.
#include <stdio.h>
#include "sleep.h"

__attribute__((noinline)) void slow_step(void) { sleep_ms(12); }

int main(void) {
    slow_step();
    fputs("no newline at the end", stderr);
    return 0;
}
