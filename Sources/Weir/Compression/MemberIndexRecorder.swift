import Dispatch
import WeirSystem
import WeirTar

/// The member index of one compression run (docs/members.md): decides from
/// the content's first block whether it is a tar stream, walks every chunk
/// through a ``TarScanner`` as it is read, and gives the index's frame at
/// the end, for the pipeline to write just before the seek table.
///
/// A resumed run's kept frames hold content this run does not read: their
/// part of the input is walked first, reading only its header blocks from
/// the input file, so the resumed output holds the same index, byte for
/// byte, as an uninterrupted run's.
///
/// Threads: ``read(_:number:)`` on the reading thread, in chunk order;
/// ``finish(contentSize:failed:path:)`` on the thread that runs the
/// pipeline, once the reading thread is done. The scanner is behind a lock.
final class MemberIndexRecorder: Sendable {
    private let scanner = Locked<TarScanner?>(nil)
    /// The index's compression level.
    private let level: Int
    /// The input's bytes a resumed run does not read (its kept frames'), and the input.
    private let kept: Int
    private let input: Descriptor?

    /// A recorder, or nil when this run writes no index. `kept` bytes of
    /// the content are a resumed run's kept frames, read back from `input`.
    init?(options: CompressionOptions, kept: Int = 0, input: PipelineInput) {
        guard options.memberIndex, options.seekTable, options.format == .zstd else { return nil }
        level = MemberIndex.level(forRunLevel: options.level)
        self.kept = kept
        if case .descriptor(let descriptor) = input { self.input = descriptor } else { self.input = nil }
        // Without its input at hand, a resumed run cannot walk the kept part.
        if kept > 0, self.input == nil { return nil }
    }

    /// Takes chunk `number` of the content (`mapped` from the input file):
    /// the first decides whether a scan starts; every chunk goes to the scan
    /// while it runs, a mapped one through a mapping of its own
    /// (a ``FileWindow``; `pread` where none can be made), never
    /// through the compressor's.
    /// A failure to read ends the scan (no index), never the run.
    func read(_ chunk: DispatchData, number: Int, mapped: Bool) {
        scanner.withLock { scanner in
            if number == 0 { scanner = start(first: chunk) }
            guard let scan = scanner, scan.isScanning else { return }
            guard mapped, let input else { return scan.feed(chunk) }
            // A mapping of its own of the chunk's bytes, its pages given back as
            // the walk goes (``TarScanner/feed(_:)``); read by `pread` where
            // it cannot be made.
            if let window = FileWindow(file: input, offset: scan.position, count: chunk.count) {
                if !scan.feed(window) { scanner = nil }
                return
            }
            do throws(WeirError) {
                try scan.feed(upTo: scan.position + chunk.count) { (at, buffer) throws(WeirError) in
                    try input.read(into: buffer, at: at, operation: .readMemberIndex)
                }
            } catch {
                scanner = nil
            }
        }
    }

    /// The scan of a content whose first read chunk is `first`.
    private func start(first: DispatchData) -> TarScanner? {
        guard kept > 0, let input else { return TarScanner.startsTar(first) ? TarScanner(level: level) : nil }
        let scan = TarScanner(level: level)
        do throws(WeirError) {
            let head = try input.read(count: 512, at: 0, operation: .readMemberIndex)
            guard head.withUnsafeBytes({ TarScanner.startsTar($0) }) else { return nil }
            try scan.feed(upTo: kept) { (at, buffer) throws(WeirError) in
                try input.read(into: buffer, at: at, operation: .readMemberIndex)
            }
        } catch {
            return nil
        }
        return scan
    }

    /// The index's frame for a content of `contentSize` bytes; nil when it
    /// is not a whole tar, or the run failed.
    ///
    /// - Throws: ``WeirError`` when libzstd fails to compress the index.
    func finish(contentSize: Int, failed: Bool, path: String) throws(WeirError) -> TarScanner.Found? {
        guard !failed, let scan = scanner.withLock({ $0 }) else { return nil }
        return try scan.finish(contentSize: contentSize, path: path)
    }
}
