// Built in steps, as a Makefile would: app.c and util.c compiled with -c, util.c also as a shared
// library (libutil.so); then linked.
#include <stdio.h>
#include "../sleep.h"

void util_slow(void);

__attribute__((noinline)) void app_step(void) { sleep_ms(11); util_slow(); }

int main(void) {
    app_step();
    puts("twofile: done");
    return 0;
}
