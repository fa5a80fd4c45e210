// Slow calls whose time goes where the test knows (ThreadStateTests): on a CPU, asleep, blocked in a
// pipe, a lock, a condition variable, a socket, a FIFO, or waiting for a CPU another thread spins on.
//
// Usage: thread_state CASE... with CASE one of cpu sleep pipe lock cond heap connect recv fifo
// shared worker (`heap`: a lock in a heap object, which no symbol names). Each case calls one instrumented function (the slow call) from an uninstrumented caller
// that measures it with its own clocks and prints, once it returned,
//     CASE wall=W cpu=C delay=D
// in ms: its wall time, the thread's time on a CPU (CLOCK_THREAD_CPUTIME_ID) and its run delay
// (/proc/thread-self/schedstat; -1 when that cannot be read) over the call. The helpers (the
// threads that write, unlock, reply or spin later) are not instrumented. `worker` runs its slow
// call, `worker_nap`, in a second thread (printing "worker ...") while the main thread runs
// `crunch` (printing "main ..."; record it with CALLTRACE_THREADS=all). SLOW_MS (60) is how long
// each slow call is made to last.
#define _GNU_SOURCE
#include "sleep.h"
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define SLOW_MS 60

pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t config_changed = PTHREAD_COND_INITIALIZER;
static int config_version;

__attribute__((no_instrument_function)) static double now_ms(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// The calling thread's run delay so far (ms), -1 when /proc hides it.
__attribute__((no_instrument_function)) static double delay_ms(void) {
    char text[128];
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0) return -1;
    text[n] = '\0';
    unsigned long long cpu, delay;
    if (sscanf(text, "%llu %llu", &cpu, &delay) != 2) return -1;
    return delay / 1e6;
}

__attribute__((no_instrument_function)) static void fail(const char *what) {
    perror(what);
    exit(2);
}

// MARK: - The slow calls (instrumented)

volatile unsigned long crunched;

// Runs on a CPU until the thread has had `ms` of CPU time.
__attribute__((noinline)) void crunch(double ms) {
    double start = now_ms(CLOCK_THREAD_CPUTIME_ID);
    while (now_ms(CLOCK_THREAD_CPUTIME_ID) - start < ms) crunched++;
}

// The first instrumented call of a thread sets up its recording (and lets the sampler see it):
// each thread makes this one before its slow calls, so that none of them pays for that.
__attribute__((noinline)) void warm_up(void) { crunched++; }

__attribute__((noinline)) void nap(long ms) { sleep_ms(ms); }

__attribute__((noinline)) void worker_nap(long ms) { sleep_ms(ms); }

__attribute__((noinline)) void read_pipe(int fd) {
    char c;
    if (read(fd, &c, 1) != 1) fail("read pipe");
}

__attribute__((noinline)) void lock_config(void) {
    pthread_mutex_lock(&config_lock);
    pthread_mutex_unlock(&config_lock);
}

__attribute__((noinline)) void lock_object(pthread_mutex_t *lock) {
    pthread_mutex_lock(lock);
    pthread_mutex_unlock(lock);
}

__attribute__((noinline)) void wait_config(int version) {
    pthread_mutex_lock(&config_lock);
    while (config_version == version) pthread_cond_wait(&config_changed, &config_lock);
    pthread_mutex_unlock(&config_lock);
}

__attribute__((noinline)) int dial(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    snprintf(address.sun_path, sizeof address.sun_path, "%s", path);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) fail("connect");
    return fd;
}

__attribute__((noinline)) void ask(int fd) {
    char c = '?';
    if (send(fd, &c, 1, 0) != 1 || recv(fd, &c, 1, 0) != 1) fail("ask");
}

__attribute__((noinline)) void read_fifo(int fd) {
    char c;
    if (read(fd, &c, 1) != 1) fail("read fifo");
}

// MARK: - Helpers (not instrumented)

struct later {
    long ms;
    int fd;             // written to after `ms`
    pthread_mutex_t *lock; // held for `ms`
    atomic_int started;
};

__attribute__((no_instrument_function)) static void *write_later(void *arg) {
    struct later *l = arg;
    sleep_ms(l->ms);
    if (write(l->fd, "x", 1) != 1) fail("write");
    return NULL;
}

__attribute__((no_instrument_function)) static void *hold_lock(void *arg) {
    struct later *l = arg;
    pthread_mutex_lock(l->lock);
    atomic_store(&l->started, 1);
    sleep_ms(l->ms);
    pthread_mutex_unlock(l->lock);
    return NULL;
}

__attribute__((no_instrument_function)) static void *change_config(void *arg) {
    struct later *l = arg;
    sleep_ms(l->ms);
    pthread_mutex_lock(&config_lock);
    config_version++;
    pthread_cond_broadcast(&config_changed);
    pthread_mutex_unlock(&config_lock);
    return NULL;
}

// Accepts after `ms` (the listening socket is `fd`), then answers each request after `ms`.
__attribute__((no_instrument_function)) static void *serve_late(void *arg) {
    struct later *l = arg;
    sleep_ms(l->ms);
    int first = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC), second = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
    if (first < 0 || second < 0) fail("accept");
    char c;
    if (recv(second, &c, 1, 0) != 1) fail("server recv");
    sleep_ms(l->ms);
    if (send(second, &c, 1, 0) != 1) fail("server send");
    close(first);
    close(second);
    return NULL;
}

static cpu_set_t one_cpu;
static atomic_int stop_spinning, spinning;

__attribute__((no_instrument_function)) static void *spin(void *arg) {
    (void)arg;
    if (sched_setaffinity(0, sizeof one_cpu, &one_cpu) != 0) fail("sched_setaffinity");
    atomic_store(&spinning, 1);
    while (!atomic_load_explicit(&stop_spinning, memory_order_relaxed)) { }
    return NULL;
}

// MARK: - Cases

struct measure { double wall, cpu, delay; };

// The run delay is read inside the span the clocks measure (after them at the start, before them
// at the end): a wait for a CPU while /proc is read (its open and read can be preempted) then
// counts in the span's wall time, never in its delay only.
__attribute__((no_instrument_function)) static struct measure begin(void) {
    struct measure m = { now_ms(CLOCK_MONOTONIC), now_ms(CLOCK_THREAD_CPUTIME_ID), 0 };
    m.delay = delay_ms();
    return m;
}

__attribute__((no_instrument_function)) static void end(const char *name, struct measure m) {
    double delay = delay_ms();
    double wall = now_ms(CLOCK_MONOTONIC) - m.wall, cpu = now_ms(CLOCK_THREAD_CPUTIME_ID) - m.cpu;
    printf("%s wall=%.3f cpu=%.3f delay=%.3f\n", name, wall, cpu, m.delay < 0 || delay < 0 ? -1 : delay - m.delay);
}

__attribute__((no_instrument_function)) static void *worker(void *arg) {
    (void)arg;
    warm_up();
    sleep_ms(10);
    struct measure m = begin();
    worker_nap(SLOW_MS);
    end("worker", m);
    // A thread's time after its last sample is not known once it has ended: this one lives on a
    // little, as most do, so that the sampler sees its slow call end.
    sleep_ms(10);
    return NULL;
}

__attribute__((no_instrument_function)) static pthread_t start(void *(*body)(void *), struct later *l) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, body, l) != 0) fail("pthread_create");
    return thread;
}

__attribute__((no_instrument_function)) static void run(const char *name) {
    struct later l = { .ms = SLOW_MS, .lock = &config_lock };
    struct measure m;
    if (strcmp(name, "cpu") == 0) {
        m = begin();
        crunch(SLOW_MS);
        end(name, m);
    } else if (strcmp(name, "sleep") == 0) {
        m = begin();
        nap(SLOW_MS);
        end(name, m);
    } else if (strcmp(name, "pipe") == 0) {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0) fail("pipe");
        l.fd = fds[1];
        pthread_t writer = start(write_later, &l);
        m = begin();
        read_pipe(fds[0]);
        end(name, m);
        pthread_join(writer, NULL);
        close(fds[0]);
        close(fds[1]);
    } else if (strcmp(name, "lock") == 0) {
        pthread_t holder = start(hold_lock, &l);
        while (!atomic_load(&l.started)) sched_yield();
        m = begin();
        lock_config();
        end(name, m);
        pthread_join(holder, NULL);
    } else if (strcmp(name, "heap") == 0) {
        struct object { long id; pthread_mutex_t lock; } *object = calloc(1, sizeof *object);
        if (!object || pthread_mutex_init(&object->lock, NULL) != 0) fail("object");
        l.lock = &object->lock;
        pthread_t holder = start(hold_lock, &l);
        while (!atomic_load(&l.started)) sched_yield();
        m = begin();
        lock_object(&object->lock);
        end(name, m);
        pthread_join(holder, NULL);
        free(object);
    } else if (strcmp(name, "cond") == 0) {
        pthread_mutex_lock(&config_lock);
        int version = config_version;
        pthread_mutex_unlock(&config_lock);
        pthread_t changer = start(change_config, &l);
        m = begin();
        wait_config(version);
        end(name, m);
        pthread_join(changer, NULL);
    } else if (strcmp(name, "connect") == 0 || strcmp(name, "recv") == 0) {
        // With a backlog of 0 one connection waits for accept; a second one blocks in connect.
        const char *path = "thread_state.sock";
        unlink(path);
        int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un address = { .sun_family = AF_UNIX };
        snprintf(address.sun_path, sizeof address.sun_path, "%s", path);
        if (listener < 0 || bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 0) != 0)
            fail("listen");
        int queued = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (queued < 0 || connect(queued, (struct sockaddr *)&address, sizeof address) != 0) fail("connect queued");
        l.fd = listener;
        pthread_t server = start(serve_late, &l);
        if (name[0] == 'c') m = begin();
        int fd = dial(path);
        if (name[0] == 'c') end(name, m);
        if (name[0] == 'r') m = begin();
        ask(fd);
        if (name[0] == 'r') end(name, m);
        pthread_join(server, NULL);
        close(fd);
        close(queued);
        close(listener);
        unlink(path);
    } else if (strcmp(name, "fifo") == 0) {
        const char *path = "thread_state.fifo";
        unlink(path);
        // Opened for reading and writing, the open does not wait for a writer.
        int fd;
        if (mkfifo(path, 0600) != 0 || (fd = open(path, O_RDWR | O_CLOEXEC)) < 0) fail("fifo");
        l.fd = fd;
        pthread_t writer = start(write_later, &l);
        m = begin();
        read_fifo(fd);
        end(name, m);
        pthread_join(writer, NULL);
        close(fd);
        unlink(path);
    } else if (strcmp(name, "shared") == 0) {
        // This thread and a spinning one on one CPU: `crunch` gets about half of it.
        cpu_set_t allowed;
        if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) fail("sched_getaffinity");
        int cpu = 0;
        while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &allowed)) cpu++;
        CPU_ZERO(&one_cpu);
        CPU_SET(cpu, &one_cpu);
        if (sched_setaffinity(0, sizeof one_cpu, &one_cpu) != 0) fail("sched_setaffinity");
        atomic_store(&stop_spinning, 0);
        atomic_store(&spinning, 0);
        pthread_t spinner = start(spin, NULL);
        while (!atomic_load(&spinning)) sched_yield();
        m = begin();
        crunch(SLOW_MS / 2);
        end(name, m);
        atomic_store(&stop_spinning, 1);
        pthread_join(spinner, NULL);
        if (sched_setaffinity(0, sizeof allowed, &allowed) != 0) fail("sched_setaffinity");
    } else if (strcmp(name, "worker") == 0) {
        pthread_t thread = start(worker, NULL);
        m = begin();
        crunch(SLOW_MS);
        end("main", m);
        pthread_join(thread, NULL);
    } else {
        fprintf(stderr, "unknown case %s\n", name);
        exit(2);
    }
    fflush(stdout);
}

__attribute__((no_instrument_function)) int main(int argc, char **argv) {
    warm_up();
    sleep_ms(10);
    for (int i = 1; i < argc; i++) run(argv[i]);
    return 0;
}
