// The stable libzstd API only: ZSTD_STATIC_LINKING_ONLY is never defined, so
// weir links against Debian's shared libzstd without relying on symbols that
// may change between versions.
#include <zstd.h>
#include <zstd_errors.h>
