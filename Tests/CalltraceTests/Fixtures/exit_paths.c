// The ways a process ends (threshold 10 ms). argv[1] picks one: return, exit, _exit, _Exit,
// handler_exit (a signal handler calls _exit), quick_exit (after an at_quick_exit handler),
// vfork_quick_exit (a vfork child's quick_exit(0) first, which runs the at_quick_exit handlers), abort, segv,
// segv_threads (four threads crash at once, main inside its calls), kill, and for the exit status only: trap (int3: SIGTRAP), ill (ud2: SIGILL), fpe (division by
// zero: SIGFPE), sys (a syscall seccomp forbids: SIGSYS), overflow (stack overflow: SIGSEGV). Every path first completes two step() calls, then ends from inside main -> outer -> inner ->
// terminate (15 ms of work first):
//   main
//     outer
//       step            >= 12 ms
//       step            >= 12 ms
//       inner           >= 17 ms
//         terminate     >= 15 ms   (return: returns; exit: exit(3); _exit: _exit(4); _Exit: _Exit(5);
//                                   handler_exit: SIGUSR1's handler calls _exit(6);
//                                   quick_exit: quick_exit(7), whose handler prints;
//                                   vfork_quick_exit: quick_exit(8) after the child's; abort: abort();
//                                   segv: writes through a null pointer; kill: SIGKILL to itself)
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sleep.h"

// getppid() raises SIGSYS from now on.
static void forbid_getppid(void) {
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof code / sizeof code[0], code };
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) perror("seccomp");
}

__attribute__((noinline)) int recurse(volatile char *previous) {
    volatile char frame[512];
    frame[0] = previous ? previous[0] + 1 : 0;
    return recurse(frame) + frame[1];
}

// Uninstrumented, so that the open calls are those of the other paths.
__attribute__((no_instrument_function)) static void exit_from_handler(int sig) {
    (void)sig;
    _exit(6);
}

// Uninstrumented, like the handler above.
__attribute__((no_instrument_function)) static void say_quick_exit(void) {
    printf("quick_exit handler ran\n");
    fflush(stdout);
}

// Uninstrumented: four of them wait for each other, then all write through a null pointer.
static pthread_barrier_t crash_together;
__attribute__((no_instrument_function)) static void *crash_at_once(void *arg) {
    (void)arg;
    pthread_barrier_wait(&crash_together);
    *(volatile int *)(uintptr_t)0 = 1;
    return NULL;
}

__attribute__((noinline)) void step(int n) {
    sleep_ms(12);
    (void)n;
}

__attribute__((noinline)) void terminate(const char *mode) {
    sleep_ms(15);
    printf("ending by %s\n", mode);
    fflush(stdout);
    if (strcmp(mode, "exit") == 0) exit(3);
    if (strcmp(mode, "_exit") == 0) _exit(4);
    if (strcmp(mode, "_Exit") == 0) _Exit(5);
    if (strcmp(mode, "handler_exit") == 0) {
        signal(SIGUSR1, exit_from_handler);
        raise(SIGUSR1);
    }
    if (strcmp(mode, "quick_exit") == 0) {
        at_quick_exit(say_quick_exit);
        quick_exit(7);
    }
    if (strcmp(mode, "vfork_quick_exit") == 0) {
        pid_t child = vfork();
        if (child == 0) quick_exit(0);
        waitpid(child, NULL, 0);
        quick_exit(8);
    }
    if (strcmp(mode, "segv_threads") == 0) {
        pthread_barrier_init(&crash_together, NULL, 4);
        pthread_t threads[4];
        for (int i = 0; i < 4; i++) pthread_create(&threads[i], NULL, crash_at_once, NULL);
        sleep_ms(5000);
    }
    if (strcmp(mode, "abort") == 0) abort();
    if (strcmp(mode, "segv") == 0) *(volatile int *)(uintptr_t)0 = 1;
    if (strcmp(mode, "kill") == 0) kill(getpid(), SIGKILL);
    if (strcmp(mode, "trap") == 0) __asm__ volatile("int3");
    if (strcmp(mode, "ill") == 0) __builtin_trap();
    if (strcmp(mode, "fpe") == 0) {
        volatile int seven = 7, zero = 0;
        printf("%d\n", seven / zero);
    }
    if (strcmp(mode, "sys") == 0) {
        forbid_getppid();
        printf("getppid: %ld\n", (long)syscall(SYS_getppid));
    }
    if (strcmp(mode, "overflow") == 0) recurse(NULL);
}

__attribute__((noinline)) void inner(const char *mode) {
    sleep_ms(2);
    terminate(mode);
}

__attribute__((noinline)) void outer(const char *mode) {
    step(1);
    step(2);
    inner(mode);
}

int main(int argc, char **argv) {
    outer(argc > 1 ? argv[1] : "return");
    printf("returned\n");
    return 0;
}
