import WeirFiles
import WeirFormats
import WeirSystem
import Dispatch

/// The member index of one compression run (docs/members.md): decides from
/// the first chunk whether the content is a tar stream, hands every chunk
/// to a ``TarScanner``, and gives the index at the end, for the pipeline to
/// write just before the seek table.
///
/// Only a run that writes a seek table from the content's start records
/// one: a resumed run's kept frames were never scanned.
///
/// Threads: ``read(_:number:)`` on the reading thread, in chunk order;
/// ``finish(contentSize:failed:)`` on the thread that runs the pipeline,
/// once the reading thread is done. The scanner is behind a lock.
final class MemberIndexRecorder: Sendable {
    private let scanner = Locked<TarScanner?>(nil)

    /// A recorder, or nil when this run writes no index.
    init?(options: CompressionOptions, resumed: Bool) {
        guard options.memberIndex, options.seekTable, options.format == .zstd, !resumed else { return nil }
    }

    /// Takes chunk `number` of the content: the first decides whether a
    /// scan starts; every chunk goes to the scan while it runs.
    func read(_ chunk: DispatchData, number: Int) {
        let scan = scanner.withLock { scanner -> TarScanner? in
            if number == 0, TarScanner.startsTar(chunk) { scanner = TarScanner() }
            return scanner
        }
        scan?.feed(chunk)
    }

    /// The index of a content of `contentSize` bytes; nil when it is not a
    /// tar, or the run failed (the scan is then abandoned, not waited for).
    func finish(contentSize: Int, failed: Bool) -> TarScanner.Found? {
        guard let scan = scanner.withLock({ $0 }) else { return nil }
        if failed {
            scan.abandon()
            return nil
        }
        return scan.finish(contentSize: contentSize)
    }
}
