#ifndef WEIR_MAP_GUARD_H
#define WEIR_MAP_GUARD_H

#include <stdbool.h>
#include <stddef.h>

/// Guards read-only file mappings against SIGBUS.
///
/// Touching a page of a mapped file that has been truncated below it, or
/// whose read from the disk fails, raises SIGBUS, which would kill the
/// process with output half written. While a
/// mapping is registered here, a SIGBUS inside it is answered by mapping a
/// page of zeros over the faulting page (so the access completes) and
/// marking the registration as faulted; whoever reads the mapping checks the
/// mark before trusting what it read. SIGBUS anywhere else goes to the
/// handler installed before, or kills the process as it would have.

/// Installs the SIGBUS handler once; returns 0 or an errno value.
int weir_map_guard_install(void);

/// Registers [start, start + length); returns a slot, or -1 when every slot
/// is taken.
int weir_map_guard_register(const void *start, size_t length);

/// Whether a SIGBUS has hit the slot's mapping since it was registered.
bool weir_map_guard_faulted(int slot);

/// Where in the slot's mapping (bytes from its start) its first SIGBUS hit,
/// or -1 when none has: the file's page there was cut off or could not be
/// read (an I/O error), which a `pread` there tells apart.
long weir_map_guard_fault_offset(int slot);

/// Ends the slot's registration (before the mapping is unmapped).
void weir_map_guard_unregister(int slot);

#endif
