// exec (threshold 10 ms): the program runs before_exec (12 ms), then replaces itself (same pid) from
// inside do_exec with "exec after", which runs after_exec (15 ms) and returns 0. Each image prints
// one line with its pid.
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "sleep.h"

__attribute__((noinline)) void before_exec(void) { sleep_ms(12); }
__attribute__((noinline)) void after_exec(void) { sleep_ms(15); }

__attribute__((noinline)) void do_exec(const char *self) {
    sleep_ms(2);
    execl("/proc/self/exe", self, "after", (char *)NULL);  // the runtime's execl gathers the arguments
    perror("execl");
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "after") == 0) {
        after_exec();
        printf("after exec %d\n", getpid());
        return 0;
    }
    before_exec();
    printf("before exec %d\n", getpid());
    fflush(stdout);
    do_exec(argv[0]);
    return 1;
}
