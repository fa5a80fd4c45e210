// Two coroutines ping-ponging with swapcontext, each side's calls sleeping 3 ms, then main's own
// calls. argv[1] says where the coroutines' 64 KiB stacks are:
//   "main":   arrays in main's own frame; main's first instrumented call is the first coroutine's
//   "deeper": arrays in the frame of runner(), which main calls and which runs the coroutines
//   "heap":   malloc'ed, run from main
// Each: ping -> ping_work; pong -> pong_work; ping_work; pong_work; ping_work; pong_work; back to
// the host (main or runner) -> main_work; ping and pong then end, through uc_link, back to the host.
//   "link":   ping alone, on an array in main's frame, started with setcontext from main; it ends
//             through uc_link to a context getcontext saved in main (no swapcontext returns there):
//             main -> ping -> ping_work; main -> main_work
//   "jump":   ping alone, on an array in main's frame, first longjmps out of middle -> deep (2 ms)
//             inside the coroutine, then as in "link" but ending through uc_link to main's
//             swapcontext: main -> ping -> middle -> deep; ping -> ping_work; main -> main_work
// Then main -> after, after. Prints "coroutine_stacks: <mode> work=<n>".
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include "sleep.h"

enum { CO_SIZE = 1 << 16, ROUNDS = 3 };

static ucontext_t host_ctx, ping_ctx, pong_ctx;
static volatile int work;
static int jump_first;
static jmp_buf out_of_deep;

__attribute__((noinline)) void ping_work(void) { sleep_ms(3); work++; }
__attribute__((noinline)) void pong_work(void) { sleep_ms(3); work++; }
__attribute__((noinline)) void main_work(void) { sleep_ms(3); work++; }
__attribute__((noinline)) void after(void) { sleep_ms(5); work++; }
__attribute__((noinline)) void deep(void) { sleep_ms(2); longjmp(out_of_deep, 1); }
__attribute__((noinline)) void middle(void) { deep(); work++; }

void ping(void) {
    if (jump_first && !setjmp(out_of_deep)) middle();
    for (int i = 0; i < ROUNDS; i++) {
        ping_work();
        if (pong_ctx.uc_stack.ss_sp) swapcontext(&ping_ctx, &pong_ctx);
    }
}

void pong(void) {
    for (int i = 0; i < ROUNDS; i++) {
        pong_work();
        swapcontext(&pong_ctx, i + 1 < ROUNDS ? &ping_ctx : &host_ctx);
    }
}

__attribute__((no_instrument_function)) static void prepare(ucontext_t *ctx, void *stack, void (*fn)(void),
                                                             ucontext_t *link) {
    getcontext(ctx);
    ctx->uc_stack.ss_sp = stack;
    ctx->uc_stack.ss_size = CO_SIZE;
    ctx->uc_link = link;
    makecontext(ctx, fn, 0);
}

// In the caller's own frame, so that the stacks' owner is the function that switches.
#define PLAY(ping_stack, pong_stack)                                                      \
    do {                                                                                  \
        prepare(&ping_ctx, (ping_stack), ping, &host_ctx);                                \
        prepare(&pong_ctx, (pong_stack), pong, &host_ctx);                                \
        swapcontext(&host_ctx, &ping_ctx); /* ping and pong take turns; pong comes back */ \
        main_work();                                                                      \
        swapcontext(&host_ctx, &ping_ctx); /* ping ends */                                \
        swapcontext(&host_ctx, &pong_ctx); /* pong ends */                                \
    } while (0)

__attribute__((noinline)) void runner(void) {
    char ping_stack[CO_SIZE] __attribute__((aligned(16)));
    char pong_stack[CO_SIZE] __attribute__((aligned(16)));
    PLAY(ping_stack, pong_stack);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "main";
    if (strcmp(mode, "main") == 0) {
        char ping_stack[CO_SIZE] __attribute__((aligned(16)));
        char pong_stack[CO_SIZE] __attribute__((aligned(16)));
        PLAY(ping_stack, pong_stack);
    } else if (strcmp(mode, "deeper") == 0) {
        runner();
    } else if (strcmp(mode, "heap") == 0) {
        PLAY(malloc(CO_SIZE), malloc(CO_SIZE));
    } else if (strcmp(mode, "link") == 0) {
        char ping_stack[CO_SIZE] __attribute__((aligned(16)));
        static volatile int started;
        ucontext_t home;
        getcontext(&home);
        if (!started) {
            started = 1;
            prepare(&ping_ctx, ping_stack, ping, &home);
            setcontext(&ping_ctx);
        }
        main_work();
    } else if (strcmp(mode, "jump") == 0) {
        char ping_stack[CO_SIZE] __attribute__((aligned(16)));
        jump_first = 1;
        prepare(&ping_ctx, ping_stack, ping, &host_ctx);
        swapcontext(&host_ctx, &ping_ctx);
        main_work();
    } else {
        fprintf(stderr, "coroutine_stacks: unknown mode %s\n", mode);
        return 2;
    }
    after();
    after();
    printf("coroutine_stacks: %s work=%d\n", mode, work);
    return 0;
}
