#define _GNU_SOURCE
#include "thread_name.h"

#include <pthread.h>
#include <string.h>

void weir_set_thread_name(const char *name) {
    char shortened[16];
    strncpy(shortened, name, sizeof shortened - 1);
    shortened[sizeof shortened - 1] = '\0';
    pthread_setname_np(pthread_self(), shortened);
}
