// A second library for the dlopen fixture, loaded after plugin_a is gone (usually at its address):
// beta_work -> beta_inner (2 ms).
#include "sleep.h"

__attribute__((noinline)) void beta_inner(void) { sleep_ms(2); }

__attribute__((noinline)) void beta_work(void) {
    beta_inner();
    sleep_ms(1);
}
