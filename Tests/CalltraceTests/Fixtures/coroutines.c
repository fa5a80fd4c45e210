// Coroutines with makecontext/swapcontext. argv[1]:
//   "malloc": on the main thread, a malloc'ed coroutine stack; the coroutine swaps back to run()
//             half way, and run() resumes it: main -> run; coroutine -> leaf, leaf
//   "mmap":   on a worker, a coroutine stack mmap'ed before the worker starts (so above the
//             worker's stack); the coroutine ends through uc_link:
//             worker -> outer -> run -> leaf; coroutine -> leaf
//   "frame":  on the main thread, the coroutine stack is an array in main's own frame (below main's
//             stack pointer at its enter hook, above the calls it makes); main calls through
//             outer -> run, the coroutine swaps back half way and is resumed from main itself,
//             then main calls after(): main -> outer -> run; coroutine -> leaf, leaf; main -> after
// Prints "coroutines: <mode> leaves=2".
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

enum { CO_SIZE = 1 << 16 };

static ucontext_t main_ctx, co_ctx;
static volatile int leaves;
static void *co_stack;
static int swap_back, resume_from_main;

__attribute__((noinline)) void leaf(void) { leaves++; }

void coroutine(void) {
    leaf();
    if (swap_back) swapcontext(&co_ctx, &main_ctx);
    if (swap_back) leaf();
}

__attribute__((noinline)) void run(void) {
    getcontext(&co_ctx);
    co_ctx.uc_stack.ss_sp = co_stack;
    co_ctx.uc_stack.ss_size = CO_SIZE;
    co_ctx.uc_link = &main_ctx;
    makecontext(&co_ctx, coroutine, 0);
    swapcontext(&main_ctx, &co_ctx);
    if (swap_back && !resume_from_main) swapcontext(&main_ctx, &co_ctx);
    else if (!swap_back) leaf();
}

__attribute__((noinline)) void outer(void) { run(); }

__attribute__((noinline)) void after(void) { leaves += 0; }

static void *worker(void *arg) { (void)arg; outer(); return NULL; }

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "malloc";
    if (strcmp(mode, "mmap") == 0) {
        co_stack = mmap(NULL, CO_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (co_stack == MAP_FAILED) { perror("mmap"); return 2; }
        pthread_t t;
        pthread_create(&t, NULL, worker, NULL);
        pthread_join(t, NULL);
    } else if (strcmp(mode, "frame") == 0) {
        char stack[CO_SIZE] __attribute__((aligned(16)));
        co_stack = stack;
        swap_back = resume_from_main = 1;
        outer();
        swapcontext(&main_ctx, &co_ctx); // the coroutine's second half, resumed from main
        after();
        after();
    } else {
        co_stack = malloc(CO_SIZE);
        swap_back = 1;
        run();
    }
    printf("coroutines: %s leaves=%d\n", mode, leaves);
    return 0;
}
