import Dispatch
import Glibc
import WeirFormats
import WeirSystem

/// The output of a file-to-file compression or decompression that an
/// interruption does not lose: written as `NAME.part` beside `NAME`, with a
/// record of what it holds (``ResumeRecord``, in `.NAME.part.resume`), so
/// that the same command run again goes on from its last checkpoint instead
/// of from byte 0. A compression's `.part` holds whole frames, a
/// decompression's the content of whole frames (``Holds``); the record
/// lists the frames either way, and the input is sought to their end.
///
/// Checkpoints: as frames are written (in file order, ``written(_:)``), at
/// least every ``interval`` or every ``checkpointBytes`` of output, the
/// `.part` is synced (`fdatasync`) and then the frames it now surely holds
/// are appended to the record, which is synced in turn; so the record never
/// names a frame that is not on disk. They run on a serial queue of their
/// own, never on the writer's. The name `NAME` still only ever holds a
/// whole output: `.part` is renamed to it when complete (``OutputFile``).
///
/// A `.part` is resumed only when its record names the same input (device,
/// inode, size, modification and change times), the same options and this
/// very `.part` (a regular file of one link, opened without following
/// links); and every kept frame checks (``Check``: hashed or decoded,
/// against the record and the input's bytes); the `.part` is then cut back
/// to the last checkpoint. Anything else starts over, in a new `.part`
/// renamed over the old name, and says why; a `.part` with no record beside
/// it is not weir's and is not touched (the run then cannot be resumed):
/// the record is made, and its folder synced, before its `.part`. Both are
/// held with an exclusive `flock` while open: two runs never share one, and
/// a record a cut left without its `.part` is swept (``StaleTemporaries``).
package final class PartialOutput: Sendable {
    /// How the run begins.
    package enum Start: Equatable, Sendable {
        /// From byte 0, nothing kept before.
        case fresh
        /// From the checkpoint of an interrupted run: its frames and bytes.
        case resumed(frames: Int, inputBytes: Int, outputBytes: Int)
        /// From byte 0, an earlier `.part` dropped for `reason`.
        case startedOver(reason: String)
    }

    /// What the `.part` holds of each frame the record lists.
    package enum Holds: Sendable {
        /// The frame itself: a compression's output.
        case frames
        /// The frame's content: a decompression's output, whose input is
        /// the frames.
        case content

        /// A frame's bytes in the output and in the input.
        func sizes(of entry: SeekTable.Entry) -> (output: Int, input: Int) {
            let compressed = Int(entry.compressedSize), decompressed = Int(entry.decompressedSize)
            return self == .frames ? (compressed, decompressed) : (decompressed, compressed)
        }

        /// The record's checkpoint of `frames` frames, `output` and `input` bytes.
        func checkpoint(frames: Int, output: Int, input: Int) -> ResumeRecord.Checkpoint {
            self == .frames ? .init(frames: frames, compressedBytes: output, decompressedBytes: input)
                : .init(frames: frames, compressedBytes: input, decompressedBytes: output)
        }

        /// The output and input bytes of a record's checkpoint.
        func totals(of checkpoint: ResumeRecord.Checkpoint) -> (output: Int, input: Int) {
            self == .frames ? (checkpoint.compressedBytes, checkpoint.decompressedBytes)
                : (checkpoint.decompressedBytes, checkpoint.compressedBytes)
        }
    }

    /// The fewest frames an output is resumable with (64 MiB of input at
    /// the default frame size).
    package static let minimumFrames = 8

    /// Checkpoints come at least this often (seconds), unless the run's
    /// options say otherwise (their `checkpointIntervalForTesting`: a test
    /// checkpoints sooner, so that a short run can be stopped after one)...
    package static let interval: Double = 2.0
    /// ...or after this many bytes of output.
    static let checkpointBytes = 1 << 30

    /// `NAME.part`.
    package let partPath: String
    /// `.NAME.part.resume`, in the same folder (both shortened when long:
    /// ``hiddenPaths(for:)``).
    package let recordPath: String
    /// The `.part`, open for writing at its end; ``OutputFile`` closes it.
    package let descriptor: Descriptor
    /// How this run begins.
    package let start: Start
    /// Whether the `.part` holds frames or their content.
    let holds: Holds
    /// The frames kept from an earlier run (empty when fresh).
    package let keptEntries: [SeekTable.Entry]

    struct Log {
        var record: Int32
        var hash: UInt64
        var frames: Int
        var outputBytes: Int
        var inputBytes: Int
        /// Written but not yet in a checkpoint.
        var pending: [SeekTable.Entry] = []
        var pendingBytes = 0
        var last = DispatchTime.now()
        var inFlight = false
        var folderSynced = false
        var failed = false
        /// The errno of a checkpoint's failed `fdatasync` of the `.part`.
        var syncError: Int32?
    }
    private let log: Locked<Log>
    private let queue = DispatchQueue(label: "weir.checkpoint")
    private let group = DispatchGroup()
    private let folder: String
    /// Checkpoints come at least this often (seconds): ``interval``, but in tests.
    private let checkpointInterval: Double

    init(partPath: String, recordPath: String, descriptor: Descriptor, start: Start, holds: Holds,
         kept: [SeekTable.Entry], log: Log, folder: String, checkpointInterval: Double) {
        self.partPath = partPath
        self.recordPath = recordPath
        self.descriptor = descriptor
        self.start = start
        self.holds = holds
        self.keptEntries = kept
        self.log = Locked(log)
        self.folder = folder
        self.checkpointInterval = checkpointInterval
    }

    /// The bytes of input and output the kept frames stand for.
    package var keptBytes: (input: Int, output: Int) {
        if case .resumed(_, let input, let output) = start { return (input, output) }
        return (0, 0)
    }

    /// Whether a checkpoint is on disk, so that keeping the `.part` is worth it.
    package var hasCheckpoint: Bool { log.withLock { $0.frames > 0 } }

    /// The input bytes whose frames are on disk, as of the last checkpoint.
    package var checkpointedInput: Int { log.withLock { $0.inputBytes } }

    /// Called in file order with each frame written after the kept ones
    /// (a decompression's: each frame whose content is written).
    package func written(_ entry: SeekTable.Entry) {
        let holds = self.holds
        let due: [SeekTable.Entry]? = log.withLock { log in
            log.pending.append(entry)
            log.pendingBytes += holds.sizes(of: entry).output
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - log.last.uptimeNanoseconds) / 1e9
            guard !log.inFlight, !log.failed, elapsed >= checkpointInterval || log.pendingBytes >= Self.checkpointBytes
            else { return nil }
            return take(&log)
        }
        guard let due else { return }
        queue.async(group: group) { self.checkpoint(due) }
    }

    /// Takes the pending frames for a checkpoint (under the lock).
    private func take(_ log: inout Log) -> [SeekTable.Entry] {
        let entries = log.pending
        log.pending = []
        log.pendingBytes = 0
        log.inFlight = true
        log.last = .now()
        return entries
    }

    /// Makes a checkpoint of every frame written so far, now, and waits for
    /// it: for a run that is stopping (a signal), to keep all it finished.
    package func checkpointNow() {
        group.wait()
        let entries = log.withLock { log -> [SeekTable.Entry]? in
            log.failed || log.pending.isEmpty ? nil : take(&log)
        }
        if let entries { queue.sync { checkpoint(entries) } }
    }

    /// Waits for the checkpoint under way, if any: before the `.part` is
    /// closed, renamed or removed.
    package func finish() { group.wait() }

    /// Syncs the `.part`, then appends `entries` and a checkpoint to the
    /// record and syncs it. A failure stops the checkpoints (the run goes
    /// on; only what is already checkpointed can be resumed).
    private func checkpoint(_ entries: [SeekTable.Entry]) {
        let state = log.withLock { $0 }
        defer { log.withLock { $0.inFlight = false } }
        let frames = state.frames + entries.count
        let (output, input) = entries.reduce((state.outputBytes, state.inputBytes)) { total, entry in
            let sizes = holds.sizes(of: entry)
            return (total.0 + sizes.output, total.1 + sizes.input)
        }
        guard reaches(output) else { return fail() }
        guard Descriptor.retrying({ Int(fdatasync(descriptor.fd)) }) == 0 else {
            let code = errno
            return log.withLock {
                $0.failed = true
                $0.syncError = code
            }
        }
        // Once: the names of the `.part` and its record on disk too.
        if !state.folderSynced, (try? DiskSync.folder(folder)) == nil { return fail() }
        // A compression's frames as the disk now holds them, hashed once
        // (read back from the page cache): resuming checks them against it.
        var partHashes: [UInt64]?
        if holds == .frames {
            var hashes: [UInt64] = []
            var at = state.outputBytes
            for entry in entries {
                let size = Int(entry.compressedSize)
                guard let hash = try? ContentHash.of(descriptor, count: size, at: at) else { return fail() }
                hashes.append(hash)
                at += size
            }
            partHashes = hashes
        }
        let (text, hash) = ResumeRecord.append(
            entries[...], partHashes: partHashes,
            checkpoint: holds.checkpoint(
                frames: frames, output: output,
                input: input),
            after: state.hash)
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { text in
            Descriptor.retrying { Glibc.write(state.record, text.baseAddress, text.count) }
        }
        guard written == bytes.count, Descriptor.retrying({ Int(fdatasync(state.record)) }) == 0 else { return fail() }
        log.withLock {
            $0.hash = hash
            $0.frames = frames
            $0.outputBytes = output
            $0.inputBytes = input
            $0.folderSynced = true
        }
    }

    private func fail() { log.withLock { $0.failed = true } }

    /// The errno of a checkpoint's failed sync of the `.part`, once the
    /// checkpoint under way is done; nil when none failed. Such a failure
    /// is final for the output: the kernel may have dropped the bytes it
    /// could not write and reports the error once, so a later `fdatasync`
    /// of the same file succeeds over the hole (PostgreSQL's "fsyncgate",
    /// 2018). The output must fail, not be synced again and named.
    package var syncError: Int32? {
        finish()
        return log.withLock { $0.syncError }
    }

    /// Makes the `.part` at least `length` bytes long, so that it holds all
    /// it is checkpointed with: content written sparsely (decompression's
    /// default) leaves its zero blocks as holes, and the file's length is
    /// set only at the end of the run. Every byte before `length` is written
    /// (the writer goes in order): a read there that finds the end of the
    /// file finds a trailing hole, made real by writing its last zero.
    private func reaches(_ length: Int) -> Bool {
        guard length > 0 else { return true }
        var byte: UInt8 = 0
        let read = Descriptor.retrying { pread(descriptor.fd, &byte, 1, off_t(length - 1)) }
        if read == 1 { return true }
        byte = 0
        return read == 0 && Descriptor.retrying { pwrite(descriptor.fd, &byte, 1, off_t(length - 1)) } == 1
    }

    /// Removes the record (the output is complete and named, or dropped).
    package func removeRecord() {
        let record = log.withLock { log -> Int32 in
            defer { log.record = -1 }
            return log.record
        }
        if record >= 0 { Glibc.close(record) }
        FileName.withCString(recordPath, unlink)
    }

    /// Closes the record, keeping it with the `.part` for the next run.
    package func keepRecord() {
        let record = log.withLock { log -> Int32 in
            defer { log.record = -1 }
            return log.record
        }
        if record >= 0 { Glibc.close(record) }
    }
}
