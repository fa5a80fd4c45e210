// The moment of muting (MuteMomentTests): a call of a function that is being muted, open or just
// starting on another thread, must still end through its exit (docs/design.md, "The moment of
// muting"). The main thread makes `victim` hot (victim(0) returns at once) until the runtime has
// muted it, which it reads from the trace's header (muted_count), then waits 200 ms more: time
// for the runtime to take victim's exits out, had it found no call of it open. Meanwhile a second
// thread, recording too (CALLTRACE_THREADS=all), is somewhere in a call of victim:
//
//   mute_moment entering  the thread's first instrumented call is victim(30): the runtime's entry
//                         handler attaches the thread, and this fixture holds it there (it
//                         interposes pthread_setspecific, which attaching calls, before the frame
//                         is pushed) until the main thread is done. Then victim sleeps 30 ms, and
//                         the thread calls after() (20 ms).
//   mute_moment open      the thread is inside victim(-1), blocked until the main thread is done
//                         (held, slow: one call that began before the muting), then calls after().
//   mute_moment jump      the same, but victim's call ends by a longjmp out of it, to holder (its
//                         caller), which then calls after().
// stdout: the mode and victim's result on the second thread, the same traced and untraced. Exit
// status 3: the runtime did not mute victim in time; 4: the thread was never held (traced, the
// entry handler never reached pthread_setspecific: the fixture's premise no longer holds).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sleep.h"

#define NO_TRACE __attribute__((no_instrument_function))
#if defined(__clang__)
#define VICTIM __attribute__((noinline))
#else
#define VICTIM __attribute__((noinline, noipa)) // no clone, no split-off part with sleds of its own
#endif

static _Atomic int held, released;
static __thread int hold_here;
static jmp_buf back;
static int jumping;

NO_TRACE static void wait_released(void) {
    atomic_store(&held, 1);
    while (!atomic_load(&released)) sleep_ms(1);
}

// The runtime attaches a thread on its first instrumented call and calls this on the way, before
// that call's frame is pushed: the thread that asked for it waits here, inside victim's entry.
NO_TRACE int pthread_setspecific(pthread_key_t key, const void *value) {
    static int (*real)(pthread_key_t, const void *);
    if (!real) real = (int (*)(pthread_key_t, const void *))dlsym(RTLD_NEXT, "pthread_setspecific");
    if (hold_here) {
        hold_here = 0;
        wait_released();
    }
    return real(key, value);
}

VICTIM long victim(long ms) {
    if (ms < 0) {
        wait_released();
        if (jumping) longjmp(back, 1);
    } else if (ms > 0) {
        sleep_ms(ms);
    }
    return ms * 3 + 1;
}

__attribute__((noinline)) void after(void) { sleep_ms(20); }

static long result;
static volatile long sink;

__attribute__((noinline)) void holder(void) {
    if (setjmp(back) == 0) result = victim(-1);
    after();
}

NO_TRACE static void *entering(void *unused) {
    (void)unused;
    hold_here = 1;
    result = victim(30);
    after();
    return NULL;
}

NO_TRACE static void *open_call(void *unused) {
    (void)unused;
    holder();
    return NULL;
}

// The trace header's muted_count (offset 196, docs/trace-format.md); 0 untraced.
NO_TRACE static unsigned muted_count(void) {
    const char *path = getenv("CALLTRACE_OUTPUT");
    int fd = path ? open(path, O_RDONLY) : -1;
    if (fd < 0) return 0;
    uint32_t n = 0;
    if (pread(fd, &n, sizeof n, 196) != (ssize_t)sizeof n) n = 0;
    close(fd);
    return n;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "entering";
    jumping = strcmp(mode, "jump") == 0;
    int traced = getenv("CALLTRACE_OUTPUT") != NULL, first_call = strcmp(mode, "entering") == 0;
    pthread_t thread;
    pthread_create(&thread, NULL, first_call ? entering : open_call, NULL);
    // Untraced, no entry handler runs to be held in (the open call is held all the same).
    for (int i = 0; !atomic_load(&held) && (traced || !first_call); i++) {
        if (i == 10000) return 4;
        sleep_ms(1);
    }
    for (long round = 0; round < 1000; round++) {
        for (long i = 0; i < 10000; i++) sink += victim(0);
        if (!traced || muted_count() > 0) break;
        if (round == 999) return 3;
    }
    if (traced) sleep_ms(200);
    atomic_store(&released, 1);
    pthread_join(thread, NULL);
    printf("%s %ld\n", mode, result);
    return 0;
}
