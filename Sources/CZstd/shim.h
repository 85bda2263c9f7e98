// libzstd's whole API, the advanced part included (ZSTD_STATIC_LINKING_ONLY,
// ZDICT_STATIC_LINKING_ONLY): the cover and fast-cover dictionary trainers,
// ZSTD_getCParams, literal compression modes, frame progression. Debian's
// shared libzstd exports these symbols, but their layout may change between
// versions: weir checks at start-up that the library is the version of this
// header (weir_zstd_header_version, Zstd.checkLibraryVersion).
#define ZSTD_STATIC_LINKING_ONLY
#define ZDICT_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>
#include <zdict.h>

/// ZSTD_VERSION_NUMBER of the header weir was compiled against.
static inline unsigned weir_zstd_header_version(void) { return ZSTD_VERSION_NUMBER; }

/// The advanced parameters that zstd.h names by macro (Swift sees no macro
/// that aliases an enum value).
static const ZSTD_cParameter weir_c_literalCompressionMode = ZSTD_c_literalCompressionMode;
static const ZSTD_cParameter weir_c_stableInBuffer = ZSTD_c_stableInBuffer;
static const ZSTD_cParameter weir_c_srcSizeHint = ZSTD_c_srcSizeHint;
static const ZSTD_cParameter weir_c_useRowMatchFinder = ZSTD_c_useRowMatchFinder;
static const ZSTD_cParameter weir_c_targetCBlockSize = ZSTD_c_targetCBlockSize;
