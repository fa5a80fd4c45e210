// Functions with big stack frames that return normally: gcc -O2 tail-calls the exit hook in both,
// and big_frame's return address lies more than 64 words above its stack pointer.
#include <stdio.h>
#include <string.h>
#include "sleep.h"

volatile int sink;

__attribute__((noinline)) void big_frame(const char *s) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s-%s", s, s);
    sleep_ms(12);
    sink = (int)strlen(buf);
}

__attribute__((noinline)) void huge_frame(const char *s) {
    char buf[32768];
    snprintf(buf, sizeof buf, "%s-%s", s, s);
    sleep_ms(12);
    sink = (int)strlen(buf);
}

int main(int argc, char **argv) {
    (void)argc;
    big_frame(argv[0]);
    huge_frame(argv[0]);
    printf("%d\n", sink > 0);
    return 0;
}
