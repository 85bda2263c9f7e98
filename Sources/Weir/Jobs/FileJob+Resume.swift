import Glibc
import WeirFiles
import WeirFormats
import WeirPipeline
import WeirSystem

extension FileJob {
    /// The resumable output (``PartialOutput``) of a run from the regular
    /// file open as `input` into `path`, when `operation` asks for one and
    /// the run makes ``PartialOutput/minimumFrames`` frames or more: below,
    /// a run is short and its record would cost a folder sync per file of a
    /// tree. Nil when the run cannot be resumed; the caller then writes a
    /// plain temporary file.
    ///
    /// - A compression in zstd with a seek table, not `--rsyncable` (its
    ///   cuts depend on the content before them) nor `--adapt` (its levels
    ///   on the output's pace): its `.part` holds frames.
    /// - A decompression of a file weir wrote in that many frames, which its
    ///   seek table says (describing the whole file: not a concatenation):
    ///   its `.part` holds their content. A file of one frame (stock
    ///   zstd's) cannot be cut, and one without a table is not weir's.
    /// The kept frames are checked against the input (``PartialOutput/Check``).
    ///
    /// A run that would be resumable but finds a folder at a hidden name
    /// (which weir never removes) goes on without and says so in `notice`:
    /// stopped, it would keep nothing.
    static func resumableOutput(_ path: String, force: Bool, operation: Operation, input: Descriptor,
                                status: FileStatus?) throws(WeirError) -> (output: OutputFile?, notice: String?) {
        // A remote object has no identity a later run could check (a file's device, inode and times).
        guard let status, input.source == nil, let size = InputKind.trustedSize(of: input, status: status) else {
            return (nil, nil)
        }
        let output: OutputFile?
        switch operation {
        case .compress(let options):
            guard options.resumable, options.format == .zstd, options.seekTable, !options.rsyncable,
                  options.adaptiveLevels == nil,
                  size >= PartialOutput.minimumFrames * options.fitted(toInputSize: size).chunkSize else {
                return (nil, nil)
            }
            output = try OutputFile.resumable(path: path, force: force, identity: ResumeRecord.identity(of: status),
                                              options: options.resumeFingerprint(size: size),
                                              dictionary: options.dictionary, input: input,
                                              verifies: options.verify,
                                              checkpointInterval: options.checkpointIntervalForTesting
                                                  ?? PartialOutput.interval)
        case .decompress(let options):
            guard options.resumable, Self.isWeirsOwn(input, size: size) else { return (nil, nil) }
            output = try OutputFile.resumable(path: path, force: force, identity: ResumeRecord.identity(of: status),
                                              options: options.resumeFingerprint, holds: .content,
                                              dictionary: options.dictionary, input: input,
                                              checkpointInterval: options.checkpointIntervalForTesting
                                                  ?? PartialOutput.interval)
        case .test:
            return (nil, nil)
        }
        return (output, output == nil ? PartialOutput.folderInTheWay(for: path) : nil)
    }

    /// Whether the file open as `input`, of `size` bytes, starts with a zstd
    /// frame and ends with a seek table that lists every frame from its
    /// first byte, ``PartialOutput/minimumFrames`` of them or more.
    private static func isWeirsOwn(_ input: Descriptor, size: Int) -> Bool {
        guard let first = try? input.read(count: 4, at: 0, operation: .read), FrameHeader.startsFrame(first),
            let table = try? SeekTable.decode(
                fileSize: size, path: input.path,
                reading: { count, offset throws(WeirError) in
                    try input.read(count: count, at: offset, operation: .readSeekTable)
                })
        else { return false }
        return table.dataStart == 0 && table.entries.count >= PartialOutput.minimumFrames
    }

    /// Seeks `input` past what `partial` kept (the bytes its frames, or
    /// their content, were made from), and counts those bytes in the
    /// progress: the run goes on from there.
    func skipKept(_ partial: PartialOutput?, input: Descriptor, observer: ProgressObserver?) throws(WeirError) {
        let kept = partial?.keptBytes ?? (input: 0, output: 0)
        guard kept.input > 0 else { return }
        guard lseek(input.fd, off_t(kept.input), SEEK_SET) == kept.input else {
            throw WeirError.system(errno, path: inputName, operation: .read)
        }
        observer?.bytesRead(kept.input)
        observer?.bytesWritten(kept.output)
    }
}
