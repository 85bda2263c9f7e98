#include "map_guard.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

// A fixed table, so the signal handler never takes a lock or allocates.
// `start` is written last when a slot is filled and cleared first when it is
// emptied; 0 means free.
#define SLOTS 1024

struct slot {
    _Atomic uintptr_t start;
    _Atomic size_t length;
    _Atomic bool faulted;
    _Atomic long fault_offset;  // the first fault's offset in the mapping, -1 before one
};

static struct slot slots[SLOTS];
static struct sigaction previous;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int install_error;
static uintptr_t page_size;

static void on_sigbus(int signal, siginfo_t *info, void *context) {
    uintptr_t address = (uintptr_t)info->si_addr;
    for (int i = 0; i < SLOTS; i++) {
        uintptr_t start = atomic_load(&slots[i].start);
        if (start == 0 || address < start) continue;
        if (address - start >= atomic_load(&slots[i].length)) continue;
        void *page = (void *)(address & ~(page_size - 1));
        int saved = errno;
        void *zeros = mmap(page, page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        errno = saved;
        if (zeros == MAP_FAILED) break;
        long none = -1;
        atomic_compare_exchange_strong(&slots[i].fault_offset, &none, (long)(address - start));
        atomic_store(&slots[i].faulted, true);
        return;  // the access is retried and now reads zeros
    }
    // Not one of ours: what would have happened without this handler.
    if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction) {
        previous.sa_sigaction(signal, info, context);
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(signal);
    } else {
        // Back to the default action; returning retries the access, which
        // faults again and ends the process with SIGBUS.
        struct sigaction fallback;
        memset(&fallback, 0, sizeof fallback);
        fallback.sa_handler = SIG_DFL;
        sigaction(SIGBUS, &fallback, NULL);
    }
}

static void install(void) {
    page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGBUS, &action, &previous) != 0) install_error = errno;
}

int weir_map_guard_install(void) {
    pthread_once(&once, install);
    return install_error;
}

int weir_map_guard_register(const void *start, size_t length) {
    if (start == NULL || length == 0) return -1;
    for (int i = 0; i < SLOTS; i++) {
        // Claim a free slot with a placeholder start, then publish.
        uintptr_t expected = 0;
        if (!atomic_compare_exchange_strong(&slots[i].start, &expected, UINTPTR_MAX)) continue;
        atomic_store(&slots[i].faulted, false);
        atomic_store(&slots[i].fault_offset, -1);
        atomic_store(&slots[i].length, length);
        atomic_store(&slots[i].start, (uintptr_t)start);
        return i;
    }
    return -1;
}

bool weir_map_guard_faulted(int slot) {
    if (slot < 0 || slot >= SLOTS) return false;
    return atomic_load(&slots[slot].faulted);
}

long weir_map_guard_fault_offset(int slot) {
    if (slot < 0 || slot >= SLOTS || !atomic_load(&slots[slot].faulted)) return -1;
    return atomic_load(&slots[slot].fault_offset);
}

void weir_map_guard_unregister(int slot) {
    if (slot < 0 || slot >= SLOTS) return;
    atomic_store(&slots[slot].start, 0);
}
