// The hang watchdog's fixture: an instrumented function blocks 600 ms in an uninstrumented libc
// call, in the way argv[1] names. Everything it prints is the same traced and untraced: the call's
// result, whether the wait lasted its full time, and errno (set to a marker before the wait).
//   poll    poll(NULL, 0, 600): a timed sleep the capture signal interrupts and the handler resumes
//   sleep   nanosleep 600 ms, likewise
//   read    read() on a pipe a thread writes to after 600 ms (restarted by SA_RESTART)
//   epoll   epoll_wait(-1) on that pipe (re-issued by the handler)
//   mutex   pthread_mutex_lock on a mutex a thread holds for 600 ms
//   owned   like poll, but the program owns the capture signal (its handler counts deliveries)
//   alarm   like poll, but the program's own SIGALRM (no SA_RESTART) cuts it short at 400 ms: EINTR
//   files   like poll, with eight files the program opened just before (the lowest free
//           descriptors) then checked: each still holds its 10 bytes, at offset 0
//   quick   no hang: ten calls of 20 ms
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 600

static int fds[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t owned_deliveries;

__attribute__((no_instrument_function)) static long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

__attribute__((no_instrument_function)) static void *late_writer(void *arg) {
    (void)arg;
    usleep(WAIT_MS * 1000);
    if (write(fds[1], "hello", 5) != 5) return NULL;
    return NULL;
}

__attribute__((no_instrument_function)) static void *lock_holder(void *arg) {
    (void)arg;
    usleep(WAIT_MS * 1000);
    pthread_mutex_unlock(&lock);
    return NULL;
}

__attribute__((no_instrument_function)) static void on_owned_signal(int sig) {
    (void)sig;
    owned_deliveries++;
}

static volatile sig_atomic_t alarms;

__attribute__((no_instrument_function)) static void on_alarm(int sig) {
    (void)sig;
    alarms++;
}

__attribute__((noinline)) int wait_in_poll(void) { return poll(NULL, 0, WAIT_MS); }

__attribute__((noinline)) int wait_in_sleep(void) {
    struct timespec ts = { 0, WAIT_MS * 1000000L };
    return nanosleep(&ts, NULL);
}

__attribute__((noinline)) long wait_in_read(char *buf, size_t n) { return read(fds[0], buf, n); }

__attribute__((noinline)) int wait_in_epoll(int ep) {
    struct epoll_event ev;
    return epoll_wait(ep, &ev, 1, -1);
}

__attribute__((noinline)) int wait_in_lock(void) { return pthread_mutex_lock(&lock); }

__attribute__((noinline)) void quick(void) { usleep(20 * 1000); }

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "poll";
    pthread_t thread;
    long start = 0;
    long result = 0;
    char buf[16] = { 0 };
    int err = 0;
    if (strcmp(mode, "owned") == 0) {
        struct sigaction sa = { .sa_handler = on_owned_signal };
        sigemptyset(&sa.sa_mask);
        sigaction(SIGRTMAX - 4, &sa, NULL);
    }
    if (strcmp(mode, "alarm") == 0) {
        struct sigaction sa = { .sa_handler = on_alarm };
        sigemptyset(&sa.sa_mask);
        sigaction(SIGALRM, &sa, NULL);
        ualarm(400 * 1000, 0);
    }
    // From before the helper threads start their 600 ms: on a busy machine main may reach its
    // wait well after them.
    start = now_ms();
    if (strcmp(mode, "read") == 0 || strcmp(mode, "epoll") == 0) {
        if (pipe(fds) != 0) return 2;
        pthread_create(&thread, NULL, late_writer, NULL);
    }
    if (strcmp(mode, "mutex") == 0) {
        pthread_mutex_lock(&lock);
        pthread_create(&thread, NULL, lock_holder, NULL);
    }
    if (strcmp(mode, "quick") == 0) {
        for (int i = 0; i < 10; i++) quick();
        printf("quick done\n");
        return 0;
    }
    int ep = -1;
    if (strcmp(mode, "epoll") == 0) {
        ep = epoll_create1(0);
        struct epoll_event ev = { .events = EPOLLIN };
        epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev);
    }
    FILE *files[8] = { 0 };
    if (strcmp(mode, "files") == 0) {
        for (int i = 0; i < 8; i++) {
            if (!(files[i] = tmpfile()) || write(fileno(files[i]), "0123456789", 10) != 10) return 2;
            lseek(fileno(files[i]), 0, SEEK_SET);
        }
    }
    errno = EDOM; // a successful call leaves errno alone: so must the capture
    if (strcmp(mode, "poll") == 0 || strcmp(mode, "owned") == 0 || strcmp(mode, "alarm") == 0 ||
        strcmp(mode, "files") == 0)
        result = wait_in_poll();
    else if (strcmp(mode, "sleep") == 0) result = wait_in_sleep();
    else if (strcmp(mode, "read") == 0) result = wait_in_read(buf, sizeof buf - 1);
    else if (strcmp(mode, "epoll") == 0) result = wait_in_epoll(ep);
    else if (strcmp(mode, "mutex") == 0) result = wait_in_lock();
    err = errno;
    long waited = now_ms() - start;
    printf("%s returned %ld errno %s%s%s\n", mode, result, err == EDOM ? "unchanged" : strerror(err),
           buf[0] ? " read " : "", buf);
    printf("waited the full time: %s\n", waited >= WAIT_MS - 10 ? "yes" : "no");
    if (strcmp(mode, "owned") == 0) printf("program's handler ran %d times\n", (int)owned_deliveries);
    if (strcmp(mode, "files") == 0) {
        int kept = 0;
        for (int i = 0; i < 8; i++) {
            struct stat st;
            int fd = fileno(files[i]);
            kept += fstat(fd, &st) == 0 && st.st_size == 10 && lseek(fd, 0, SEEK_CUR) == 0;
        }
        printf("files kept: %d of 8\n", kept);
    }
    if (strcmp(mode, "alarm") == 0) printf("alarm handler ran %d times, after %s400 ms\n", (int)alarms, waited >= 390 ? "" : "less than ");
    return 3;
}
