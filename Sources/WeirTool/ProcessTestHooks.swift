#if WEIR_TEST_HOOKS
import Glibc
import WeirFiles
import WeirSystem

/// The engine's process-wide test hooks, set from the environment at the
/// executable's start, before any thread of the run exists and before the
/// engine first reads them (their fields are unguarded for that reason).
/// Only where WEIR_TEST_HOOKS is defined (Package.swift, `testHooks`): the
/// release binary holds neither the names nor a way to set them. The hooks
/// of one run's options are set where the options are made
/// (RunSettings+Compression, RunSettings+Jobs).
enum ProcessTestHooks {
    static func install() {
        // Checkpoints sooner, so that a short run can be stopped after one.
        if let value = getenv("WEIR_TEST_CHECKPOINT_INTERVAL").flatMap({ Double(String(cString: $0)) }), value >= 0 {
            PartialOutput.intervalForTesting = value
        }
        // The fault suite maps, resumes and indexes files on its FUSE file
        // system, whose sizes are its folder's.
        InputKind.trustsFuseSizesForTesting = getenv("WEIR_TEST_TRUST_FUSE_SIZES").map { String(cString: $0) } == "1"
    }
}
#endif
