// A SIGALRM timer every 50 us, set in a constructor before main, with an instrumented handler:
// the first hooks (which open the trace) run while signals keep coming.
//   main -> work; on_alarm (anywhere)
// Prints "timer_from_start: ok".
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

static volatile int ticks, worked;

void on_alarm(int sig) { (void)sig; ticks++; }

__attribute__((no_instrument_function, constructor(200))) static void start_timer(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval every = { { 0, 50 }, { 0, 50 } };
    setitimer(ITIMER_REAL, &every, NULL);
}

__attribute__((noinline)) void work(void) { worked = 1; }  // not empty: clang would drop the call

int main(void) {
    work();
    struct itimerval off;
    memset(&off, 0, sizeof off);
    setitimer(ITIMER_REAL, &off, NULL);
    printf("timer_from_start: ok\n");
    return 0;
}
