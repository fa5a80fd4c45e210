// A library the dlopen fixture loads, calls and unloads: alpha_work -> alpha_inner (2 ms). Short,
// so that the call starts and ends between two of the runtime's 20 ms metadata polls.
#include "sleep.h"

__attribute__((noinline)) void alpha_inner(void) { sleep_ms(2); }

__attribute__((noinline)) void alpha_work(void) {
    alpha_inner();
    sleep_ms(1);
}
