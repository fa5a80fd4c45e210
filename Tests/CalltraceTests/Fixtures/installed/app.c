// A program built against an installed calltrace (Scripts/install) through pkg-config:
// InstallTests builds it with this directory's Makefile and with the installed calltrace-cc.
#include <calltrace.h>
#include <stdio.h>
#include <time.h>

__attribute__((noinline)) void installed_work(void) {
    struct timespec wait = {0, 20 * 1000 * 1000};  // 20 ms
    nanosleep(&wait, NULL);
}

int main(void) {
    calltrace_mark("installed start");
    installed_work();
    puts("installed app done");
    return 0;
}
