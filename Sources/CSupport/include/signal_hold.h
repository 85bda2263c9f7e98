#ifndef WEIR_SIGNAL_HOLD_H
#define WEIR_SIGNAL_HOLD_H

/// Holds `signal` until a dispatch source for it is registered: installs a
/// handler that only notes its arrival. libdispatch on Linux installs its own
/// handler when the source's registration reaches the manager thread, which
/// is asynchronous after activate(); a signal set to SIG_IGN meanwhile was
/// discarded (a Ctrl-C in the first moments of a loaded run was lost).
/// Returns 0, or -1 with errno.
int weir_signal_hold(int signal);

/// Whether `signal` arrived while held (and forgets it). Called once the
/// source is registered, when libdispatch's handler has replaced the hold's,
/// so that raising it again reaches the source.
int weir_signal_take(int signal);

#endif
