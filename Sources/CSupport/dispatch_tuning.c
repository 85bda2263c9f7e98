#include "dispatch_tuning.h"

#include <stddef.h>

// Weak: resolves to NULL when the libdispatch linked in (statically or at
// load time) does not define it.
#pragma weak _dispatch_iocntl
extern void _dispatch_iocntl(uint32_t param, uint64_t value);

bool weir_dispatch_iocntl_available(void) {
    return _dispatch_iocntl != NULL;
}

void weir_dispatch_iocntl(uint32_t param, uint64_t value) {
    if (_dispatch_iocntl != NULL) _dispatch_iocntl(param, value);
}
