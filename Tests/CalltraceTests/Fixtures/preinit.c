// An instrumented function in .preinit_array: the loader runs it before any constructor, libc's
// start-up and the runtime's included. early() -> slow() (15 ms), then main -> slow(). Prints
// "main".
#include <stdio.h>
#include "sleep.h"

__attribute__((noinline)) void slow(void) { sleep_ms(15); }

__attribute__((noinline)) static void early(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    (void)envp;
    slow();
}

__attribute__((section(".preinit_array"), used)) static void (*const run_early)(int, char **, char **) = early;

int main(void) {
    slow();
    puts("main");
    return 0;
}
