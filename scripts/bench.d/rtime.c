/* scripts/bench's timer: `rtime [-f '%e %U %S %M %x'] -o FILE COMMAND [ARG...]`
 * (GNU time's command line, that format alone) runs COMMAND and
 * writes to FILE what GNU time writes for `-f '%e %U %S %M %x'`: wall
 * seconds, user and system CPU seconds, peak RSS in KiB, exit status — the
 * CPU seconds to the microsecond, where GNU time prints hundredths (a run of
 * 0.1 s had its CPU in steps of 10%). The kernel's user + system total is
 * the task's scheduled time (nanoseconds); its split between the two is
 * sampled at the tick, so the bench reads their sum. A command killed by a
 * signal: "Command terminated by signal N" first, as GNU time, and 128 + N.
 * Built by timing.py with the system's cc on first use. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int at = 1;
    if (argc > 2 && strcmp(argv[1], "-f") == 0) {
        if (strcmp(argv[2], "%e %U %S %M %x") != 0) {
            fprintf(stderr, "rtime: writes '%%e %%U %%S %%M %%x' alone, not '%s'\n", argv[2]);
            return 2;
        }
        at = 3;
    }
    if (argc < at + 3 || strcmp(argv[at], "-o") != 0) {
        fprintf(stderr, "usage: rtime [-f '%%e %%U %%S %%M %%x'] -o FILE COMMAND [ARG...]\n");
        return 2;
    }
    const char *path = argv[at + 1];
    char **command = argv + at + 2;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) {
        perror("rtime: fork");
        return 2;
    }
    if (pid == 0) {
        execvp(command[0], command);
        perror("rtime: exec");
        _exit(127);
    }
    /* As GNU time: the timed command takes the terminal's interrupts. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    int status;
    struct rusage usage;
    if (wait4(pid, &status, 0, &usage) < 0) {
        perror("rtime: wait4");
        return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    FILE *out = fopen(path, "w");
    if (!out) {
        perror("rtime: the output file");
        return 2;
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (WIFSIGNALED(status)) fprintf(out, "Command terminated by signal %d\n", WTERMSIG(status));
    double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    fprintf(out, "%.6f %ld.%06ld %ld.%06ld %ld %d\n", wall, (long)usage.ru_utime.tv_sec,
            (long)usage.ru_utime.tv_usec, (long)usage.ru_stime.tv_sec, (long)usage.ru_stime.tv_usec,
            usage.ru_maxrss, code);
    fclose(out);
    return code;
}
