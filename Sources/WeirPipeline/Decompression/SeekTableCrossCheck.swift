import WeirFormats
import WeirSystem

/// Checks the seek table at the end of a regular file against the frames
/// the scanner finds and the sizes they decode to. The table is never used
/// to cut frames, so a wrong table cannot make wrong output; a mismatch is
/// reported at the end of the run (a warning, or an error when testing).
///
/// The reading thread reports frames as they end; workers report the size a
/// frame decoded to. The first mismatch in table order is kept.
final class SeekTableCrossCheck: Sendable {
    /// The file offset of the stream's first byte, for messages.
    let streamBase: Int
    private let check: Locked<SeekTableCheck?>
    private let kept = Locked<SeekTableCheck.Mismatch?>(nil)

    /// - Parameter check: the table read from the file; nil for input that
    ///   is not a regular file (nothing is checked).
    init(_ check: SeekTableCheck?, streamBase: Int) {
        self.check = Locked(check)
        self.streamBase = streamBase
    }

    /// The first way the table disagrees with the frames, if any.
    var mismatch: SeekTableCheck.Mismatch? { kept.current }

    /// Checks a frame that ended; returns the content size its entry lists,
    /// to compare once the frame is decoded. Reading thread only.
    func frameFound(_ boundary: FrameBoundary) -> SeekTableCheck.Expectation? {
        let (expected, mismatch) = check.withLock { check -> (SeekTableCheck.Expectation?, SeekTableCheck.Mismatch?) in
            guard check?.mismatch == nil else { return (nil, nil) }
            let expected = check?.frameFound(boundary)
            return (expected, check?.mismatch)
        }
        if let mismatch { record(mismatch) }
        return expected
    }

    /// Checks the size a frame decoded to against its entry; any thread.
    func frameDecoded(_ boundary: FrameBoundary, produced: Int, expected: SeekTableCheck.Expectation?) {
        guard let expected, expected.size != produced else { return }
        record(SeekTableCheck.decodedSize(entry: expected.entry, listed: expected.size, frame: boundary,
                                          streamBase: streamBase, decoded: produced))
    }

    /// Declares the end of the stream: entries left over are a mismatch.
    func finish() {
        let mismatch = check.withLock { check -> SeekTableCheck.Mismatch? in
            check?.finish()
            return check?.mismatch
        }
        if let mismatch { record(mismatch) }
    }

    /// Keeps `mismatch` if it comes before the one kept so far (or is the first).
    private func record(_ mismatch: SeekTableCheck.Mismatch) {
        kept.withLock { current in
            if current.map({ mismatch.precedes($0) }) ?? true { current = mismatch }
        }
    }
}
