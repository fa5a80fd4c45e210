// exit() from deep inside: main -> outer -> inner, inner sleeps 15 ms then calls exit(5).
#include <stdio.h>
#include <stdlib.h>
#include "sleep.h"

__attribute__((noinline)) void inner(void) {
    sleep_ms(15);
    printf("leaving from inner\n");
    fflush(stdout);
    exit(5);
}

__attribute__((noinline)) void outer(void) {
    sleep_ms(2);
    inner();
}

int main(void) {
    outer();
    return 0;
}
