#if WEIR_TEST_HOOKS
import Glibc
import WeirSystem

/// The engine's process-wide test hook (one left: the file systems whose
/// sizes are trusted), set from the environment at the executable's start,
/// before any thread of the run exists and before the engine first reads
/// it (its field is unguarded for that reason).
/// Only where WEIR_TEST_HOOKS is defined (Package.swift, `testHooks`): the
/// release binary holds neither the names nor a way to set them. The hooks
/// of one run's options are set where the options are made
/// (RunSettings+Compression, RunSettings+Jobs).
enum ProcessTestHooks {
    static func install() {
        // The fault suite maps, resumes and indexes files on its FUSE file
        // system, whose sizes are its folder's.
        InputKind.trustsFuseSizesForTesting = getenv("WEIR_TEST_TRUST_FUSE_SIZES").map { String(cString: $0) } == "1"
    }
}
#endif
