import Glibc
import WeirFormats
import WeirSystem

/// Tells a ``ProgressObserver`` of the input a decoding run's work has
/// taken, as decoders take it, and of each frame decoded: the progress of
/// `-d` follows the decoding, not the reading (a frame is read whole long
/// before a worker is done with it).
///
/// Every count goes to the observer's `DATA_ADD` source (the one channel
/// of counts); the tally keeps only the sum it told, so that the run's end
/// can tell what no decoder took (``settle(at:)``: skipped bytes, a gap
/// between members) and the line ends at 100%, never past it.
///
/// Any thread: the sum is behind a lock, taken once per step (256 KiB).
final class WorkTally: Sendable {
    /// The input a decoder takes between two counts, when someone follows.
    static let step = FrameDecoder.step

    private let observer: ProgressObserver?
    /// Microseconds a decoder waits after each step (tests of the line only).
    private let delay: UInt32
    /// A file a decoder waits on after each step while it exists (tests of the line only).
    private let hold: String?
    private let told = Locked(0)

    /// - Parameters:
    ///   - observer: who follows the run; nil: nothing is told, nothing stepped.
    ///   - stepDelay: seconds to wait after each step (`WEIR_TEST_STEP_DELAY`).
    ///   - stepHold: a file to wait on after each step while it exists (``StepHold``).
    init(observer: ProgressObserver?, stepDelay: Double? = nil, stepHold: String? = nil) {
        self.observer = observer
        hold = stepHold
        delay = UInt32(min(max(stepDelay ?? 0, 0), 60) * 1e6)
    }

    /// Whether anyone follows: decoders step only then.
    var isFollowed: Bool { observer != nil }

    /// What a decoder calls with the input it took; nil when nobody follows.
    var consumed: (@Sendable (Int) -> Void)? {
        guard observer != nil else { return nil }
        return { [self] count in took(count) }
    }

    /// `count` more bytes of input taken by the work.
    func took(_ count: Int) {
        guard let observer, count > 0 else { return }
        told.withLock { $0 += count }
        observer.bytesRead(count)
        if delay > 0 { usleep(delay) }
        StepHold.wait(whileExists: hold)
    }

    /// One more frame (or member) decoded.
    func frameDone(_ count: Int = 1) {
        guard let observer else { return }
        for _ in 0 ..< max(0, count) { observer.frameWritten() }
    }

    /// At the run's end, `bytesIn` bytes of input were taken in all: tells
    /// what the decoders did not (never more than that).
    func settle(at bytesIn: Int) {
        guard let observer else { return }
        let missing = told.withLock { told in
            defer { told = max(told, bytesIn) }
            return bytesIn - told
        }
        if missing > 0 { observer.bytesRead(missing) }
    }
}
