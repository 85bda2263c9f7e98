// libarchive (Debian's libarchive-dev): its tar reader finds the members of a
// tar stream as weir compresses it, for the member index (docs/members.md).
// Only archive_read_support_format_tar is used, fed from memory, no filters.
#include <archive.h>
#include <archive_entry.h>
