#ifndef WEIR_DISPATCH_TUNING_H
#define WEIR_DISPATCH_TUNING_H

#include <stdbool.h>
#include <stdint.h>

/// Whether the libdispatch linked in has `_dispatch_iocntl`, its process-wide
/// I/O knob: exported, undeclared, by the toolchain's libdispatch.so; hidden
/// in its static archive (a `--static-swift-stdlib` build), where only a
/// link-time reference reaches it, which dlsym cannot.
bool weir_dispatch_iocntl_available(void);

/// `_dispatch_iocntl(param, value)` when available, else nothing.
void weir_dispatch_iocntl(uint32_t param, uint64_t value);

#endif
