#include "../sleep.h"

__attribute__((noinline)) void util_slow(void) { sleep_ms(12); }
