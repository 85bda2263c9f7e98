// The stable libzstd API only: ZSTD_STATIC_LINKING_ONLY is never defined, so
// weir links against Debian's shared libzstd without relying on symbols that
// may change between versions.
#include <zstd.h>
#include <zstd_errors.h>
// The stable dictionary builder (ZDICT_trainFromBuffer, ZDICT_getDictID);
// ZDICT_STATIC_LINKING_ONLY is never defined either.
#include <zdict.h>
