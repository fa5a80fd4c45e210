// Marks and frames (calltrace.h), sleep-based; MarkTests pins them. Modes:
//   (none)   "constructor" from an uninstrumented constructor, before any hook (so before the
//            trace opens); main sleeps 20 ms; "ready"; "config" with extra "path=/etc/x"; a second
//            thread marks "worker start", sleeps 10 ms, marks "worker done"; then 20 frames, each
//            one do_frame() apart: 5 ms, or 50 ms for frames 7 and 13 (deliberately long); then a
//            mark with a 300-byte name, one with a NULL name and a NULL extra, one whose name is
//            cut inside a 2-byte UTF-8 character, and "done". Prints "main_tid N" and "worker_tid N".
//   burst N  N frames as fast as it can (more than the queue holds): each recorded or counted.
//   fork     marks "parent before", forks; the child marks "child" and two frames and exits; the
//            parent waits, marks "parent after". Each process's trace holds its own marks.
//   signal   for 200 ms, "loop" marks every 100 us while a 1 ms timer's SIGALRM handler marks
//            "tick" (in the middle of the loop's own marks, now and then); prints "loops N ticks N".
//   cost N   N frames in rounds of 256 with a pause between (the drain thread keeps up); prints
//            "frame_ns X", the mean cost of one calltrace_frame() call.
//   crash    crash_soon() sleeps 12 ms, marks "last words" and aborts at once: the mark is still
//            in the queue when the process dies.
#define _GNU_SOURCE
#include <calltrace.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "sleep.h"

__attribute__((constructor, no_instrument_function)) static void early(void) { calltrace_mark("constructor"); }

__attribute__((noinline)) void do_frame(int i) { sleep_ms(i == 7 || i == 13 ? 50 : 5); }

__attribute__((noinline)) void *worker(void *arg) {
    printf("worker_tid %ld\n", (long)syscall(SYS_gettid));
    calltrace_mark("worker start");
    sleep_ms(10);
    calltrace_mark("worker done");
    return arg;
}

__attribute__((no_instrument_function)) static long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static volatile sig_atomic_t ticks;

__attribute__((no_instrument_function)) static void on_alarm(int sig) {
    (void)sig;
    calltrace_mark("tick");
    ticks++;
}

__attribute__((no_instrument_function)) static int signal_loop(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval timer = { { 0, 1000 }, { 0, 1000 } };
    setitimer(ITIMER_REAL, &timer, NULL);
    long end = now_ns() + 200000000L, loops = 0;
    while (now_ns() < end) {
        calltrace_mark_extra("loop", "in the main loop");
        loops++;
        long until = now_ns() + 100000L;
        while (now_ns() < until) { }
    }
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &off, NULL);
    printf("loops %ld ticks %d\n", loops, (int)ticks);
    return 0;
}

__attribute__((noinline)) void crash_soon(void) {
    sleep_ms(12);
    calltrace_mark_extra("last words", "just before abort");
    abort();
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "crash") == 0) crash_soon();
    if (argc == 3 && strcmp(argv[1], "burst") == 0) {
        int n = atoi(argv[2]);
        for (int i = 0; i < n; i++) calltrace_frame();
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "signal") == 0) return signal_loop();
    if (argc == 2 && strcmp(argv[1], "fork") == 0) {
        calltrace_mark("parent before");
        do_frame(0);
        pid_t child = fork();
        if (child == 0) {
            calltrace_mark("child");
            calltrace_frame();
            do_frame(0);
            calltrace_frame();
            exit(0);
        }
        int status = 0;
        waitpid(child, &status, 0);
        calltrace_mark("parent after");
        printf("child %d\n", (int)child);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    if (argc == 3 && strcmp(argv[1], "cost") == 0) {
        long n = atol(argv[2]), done = 0, spent = 0;
        while (done < n) {
            long start = now_ns();
            for (int i = 0; i < 256; i++) calltrace_frame();
            spent += now_ns() - start;
            done += 256;
            sleep_ms(3);
        }
        printf("frame_ns %.1f\n", (double)spent / (double)done);
        return 0;
    }
    printf("main_tid %ld\n", (long)syscall(SYS_gettid));
    fflush(stdout);
    sleep_ms(20);
    calltrace_mark("ready");
    calltrace_mark_extra("config", "path=/etc/x");
    pthread_t thread;
    pthread_create(&thread, NULL, worker, NULL);
    pthread_join(thread, NULL);
    for (int i = 0; i < 20; i++) {
        calltrace_frame();
        do_frame(i);
    }
    char name[301];
    memset(name, 'n', 300);
    name[300] = '\0';
    char extra[401];
    memset(extra, 'x', 400);
    extra[400] = '\0';
    calltrace_mark_extra(name, extra);
    calltrace_mark_extra(NULL, NULL);
    // 126 ASCII bytes, then "é" (2 bytes) at bytes 126-127: the cut at 127 falls inside it.
    char utf8[200];
    memset(utf8, 'u', 126);
    strcpy(utf8 + 126, "\xc3\xa9tail");
    calltrace_mark(utf8);
    calltrace_mark("done");
    return 0;
}
