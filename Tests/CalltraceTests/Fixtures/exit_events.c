// Events queued just before the process ends, or just before glibc execs inside a call without a
// wrapper of ours (posix_spawn's child, system()). main -> work (12 ms), then 100 frames, a span
// "open" begun and a mark "before", all at once (the drain thread writes the queue every 1-8 ms, so
// some are still queued), then argv[1]:
//   _exit   _exit(3)
//   abort   abort()
//   segv    a write through a null pointer
//   system  system("exit 4"), a mark "after", and exit with the shell's status
//   spawn   posix_spawn of /bin/true, waited for, a mark "after", exit 0
#define _GNU_SOURCE
#include <calltrace.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sleep.h"

extern char **environ;

__attribute__((noinline)) void work(void) { sleep_ms(12); }

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    work();
    for (int i = 0; i < 100; i++) calltrace_frame();
    calltrace_span_begin("open", mode);
    calltrace_mark_extra("before", mode);
    if (strcmp(mode, "_exit") == 0) _exit(3);
    if (strcmp(mode, "abort") == 0) abort();
    if (strcmp(mode, "segv") == 0) *(volatile int *)0 = 1;
    if (strcmp(mode, "system") == 0) {
        int status = system("exit 4");
        calltrace_mark("after");
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    if (strcmp(mode, "spawn") == 0) {
        pid_t child;
        char *child_argv[] = { "/bin/true", NULL };
        int status = 0;
        if (posix_spawn(&child, "/bin/true", NULL, NULL, child_argv, environ) != 0 || waitpid(child, &status, 0) < 0)
            return 1;
        calltrace_mark("after");
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    return 0;
}
