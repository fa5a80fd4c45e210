// Spans (calltrace.h), sleep-based; SpanTests pins them. Modes:
//   (none)   "startup" begun in an uninstrumented constructor (before the trace opens) and ended
//            in main after 10 ms. "request" begun on the main thread with extra "id=7", milestone
//            "sent" after 5 ms; a worker thread takes it over, sleeps 10 ms in serve(), marks
//            milestone "answered" and ends it: it ends on the worker. "outer" (20 ms) with "inner"
//            nested (5 ms, from 5 ms in) and "overlap" begun 15 ms in, ended 10 ms after "outer"
//            ended. A calltrace_mark_at "sent earlier" with a time taken 30 ms before it is called.
//            "never" begun and never ended. The span calls given 0 do nothing. Prints "main_tid N",
//            "worker_tid N", "ids A B ..." (the ids returned) and "mark_at_ns N" (the time given).
//   fork     begins "parent span", forks; the child ends it (nothing: its trace has no begin for
//            it), then begins and ends "child span" and exits; the parent waits and ends "parent
//            span". Prints "child N".
//   exec     begins "before exec" (extra "image 1"), gives it milestone "about to exec" and at once
//            replaces itself (same pid; the events still queued are written as it execs) with
//            "after-exec ID": that image ends ID, which is not its own (nothing), then begins
//            and ends "after exec". Prints "before exec PID" and "after exec PID".
//   cost N   N begin/end pairs in rounds of 128 with a pause between; prints "span_ns X", the
//            mean cost of one begin plus its end.
#define _GNU_SOURCE
#include <calltrace.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "sleep.h"

static uint64_t startup;

__attribute__((constructor, no_instrument_function)) static void early(void) {
    startup = calltrace_span_begin("startup", NULL);
}

__attribute__((no_instrument_function)) static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) void serve(void) { sleep_ms(10); }

__attribute__((noinline)) void *worker(void *arg) {
    uint64_t request = *(uint64_t *)arg;
    printf("worker_tid %ld\n", (long)syscall(SYS_gettid));
    serve();
    calltrace_span_point(request, "answered");
    calltrace_span_end(request);
    return NULL;
}

__attribute__((noinline)) void work(int ms) { sleep_ms(ms); }

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "cost") == 0) {
        long n = atol(argv[2]), done = 0;
        uint64_t spent = 0;
        while (done < n) {
            uint64_t start = now_ns();
            for (int i = 0; i < 128; i++) calltrace_span_end(calltrace_span_begin("cost", NULL));
            spent += now_ns() - start;
            done += 128;
            sleep_ms(3);
        }
        printf("span_ns %.1f\n", (double)spent / (double)done);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "exec") == 0) {
        uint64_t before = calltrace_span_begin("before exec", "image 1");
        work(2);
        calltrace_span_point(before, "about to exec");
        char id[32];
        snprintf(id, sizeof id, "%" PRIu64, before);
        char *args[] = { argv[0], "after-exec", id, NULL };
        printf("before exec %d\n", (int)getpid());
        fflush(stdout);
        execv("/proc/self/exe", args);
        perror("execv");
        return 1;
    }
    if (argc == 3 && strcmp(argv[1], "after-exec") == 0) {
        calltrace_span_end(strtoull(argv[2], NULL, 10));
        uint64_t after = calltrace_span_begin("after exec", NULL);
        work(2);
        calltrace_span_end(after);
        printf("after exec %d\n", (int)getpid());
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "fork") == 0) {
        uint64_t parent = calltrace_span_begin("parent span", NULL);
        work(2);
        pid_t child = fork();
        if (child == 0) {
            calltrace_span_end(parent);
            uint64_t own = calltrace_span_begin("child span", NULL);
            work(2);
            calltrace_span_end(own);
            exit(0);
        }
        int status = 0;
        waitpid(child, &status, 0);
        calltrace_span_end(parent);
        printf("child %d\n", (int)child);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    printf("main_tid %ld\n", (long)syscall(SYS_gettid));
    work(10);
    calltrace_span_end(startup);

    uint64_t request = calltrace_span_begin("request", "id=7");
    work(5);
    calltrace_span_point(request, "sent");
    pthread_t thread;
    pthread_create(&thread, NULL, worker, &request);
    pthread_join(thread, NULL);

    uint64_t outer = calltrace_span_begin("outer", NULL);
    work(5);
    uint64_t inner = calltrace_span_begin("inner", NULL);
    work(5);
    calltrace_span_end(inner);
    work(5);
    uint64_t overlap = calltrace_span_begin("overlap", NULL);
    work(5);
    calltrace_span_end(outer);
    work(10);
    calltrace_span_end(overlap);

    uint64_t earlier = now_ns() - 30000000u;
    calltrace_mark_at("sent earlier", "from a library's clock", earlier);
    calltrace_mark("after mark_at");

    uint64_t never = calltrace_span_begin("never", NULL);
    calltrace_span_point(never, "halfway");
    calltrace_span_point(0, "nothing");
    calltrace_span_end(0);

    printf("ids %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", startup, request, outer,
           inner, overlap, never);
    printf("mark_at_ns %" PRIu64 "\n", earlier);
    return 0;
}
