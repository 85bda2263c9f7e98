#include "signal_hold.h"

#include <signal.h>
#include <string.h>

// One flag per signal number; written by the handler, read and cleared by
// the registration handler: sig_atomic_t, no lock, nothing allocated.
static volatile sig_atomic_t arrived[NSIG];

static void on_held_signal(int signal) {
    if (signal > 0 && signal < NSIG) {
        arrived[signal] = 1;
    }
}

int weir_signal_hold(int signal) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_held_signal;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    return sigaction(signal, &action, NULL);
}

int weir_signal_take(int signal) {
    if (signal <= 0 || signal >= NSIG || !arrived[signal]) {
        return 0;
    }
    arrived[signal] = 0;
    return 1;
}
