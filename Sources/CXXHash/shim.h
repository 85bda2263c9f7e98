// xxHash (Debian's libxxhash-dev): XXH64, the hash a zstd frame's content
// checksum is the low 32 bits of. libzstd carries its own copy but exports it
// only outside its stable API (ZSTD_XXH64), so weir links the library itself.
#include <xxhash.h>
