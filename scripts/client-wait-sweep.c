// How a client's way of waiting changes a Unix-socket round trip (docs/PERFORMANCE.md, "The floor
// and how the client waits"). A server process does W µs of busy work per call (W = 0 … 12) and
// answers; the client is blocked in read(2), or waits in poll(2) first. Prints each median and how
// often the client slept per call.
//
//   cc -O2 -o /tmp/client-wait-sweep scripts/client-wait-sweep.c
//   setpriv --reuid=65534 --regid=65534 --clear-groups /tmp/client-wait-sweep 20000 read 0   # one CPU
//   setpriv --reuid=65534 --regid=65534 --clear-groups /tmp/client-wait-sweep 20000 poll 0
//   setpriv --reuid=65534 --regid=65534 --clear-groups /tmp/client-wait-sweep 20000 read 1   # split
//
// Arguments: round trips per step, read|poll, the server's CPU (the client is on CPU 0).
#define _GNU_SOURCE
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s ROUND_TRIPS read|poll SERVER_CPU\n", argv[0]);
        return 2;
    }
    int count = atoi(argv[1]), polls = strcmp(argv[2], "poll") == 0, server_cpu = atoi(argv[3]);
    const double work[] = {0, 0.5, 1, 2, 4, 8, 12};
    char request[84], reply[114], buffer[4096];
    memset(request, 'x', sizeof request - 1);
    request[sizeof request - 1] = 0;
    memset(reply, ' ', sizeof reply - 1);
    reply[sizeof reply - 1] = 0;
    pin(0);
    for (size_t step = 0; step < sizeof work / sizeof work[0]; step++) {
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) return 1;
        pid_t server = fork();
        if (server == 0) {
            pin(server_cpu);
            close(pair[0]);
            for (;;) {
                if (read(pair[1], buffer, sizeof buffer) <= 0) _exit(0);
                double start = now_us();
                while (now_us() - start < work[step]) {}
                if (write(pair[1], reply, sizeof reply) < 0) _exit(0);
            }
        }
        close(pair[1]);
        double *samples = malloc(sizeof(double) * count);
        struct rusage before, after;
        getrusage(RUSAGE_SELF, &before);
        for (int i = 0; i < count + 2000; i++) {
            double start = now_us();
            if (write(pair[0], request, sizeof request) < 0) return 1;
            for (size_t got = 0; got < sizeof reply;) {
                if (polls) {
                    struct pollfd entry = {.fd = pair[0], .events = POLLIN};
                    poll(&entry, 1, -1);
                }
                ssize_t n = read(pair[0], buffer, sizeof buffer);
                if (n <= 0) return 1;
                got += (size_t)n;
            }
            if (i >= 2000) samples[i - 2000] = now_us() - start;
        }
        getrusage(RUSAGE_SELF, &after);
        qsort(samples, count, sizeof(double), by_value);
        printf("server work %4.1f µs: median %6.2f µs (minus the work %6.2f), client slept %.2f times per call\n",
               work[step], samples[count / 2], samples[count / 2] - work[step],
               (double)(after.ru_nvcsw - before.ru_nvcsw) / (count + 2000));
        close(pair[0]);
        waitpid(server, NULL, 0);
        free(samples);
    }
    return 0;
}
