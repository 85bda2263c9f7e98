import Glibc
import WeirFormats
import WeirSystem

/// Whether an existing output is already the finished compression of its
/// input, so that running the same command again (a tree compressed with
/// `-r` and stopped half-way) skips it instead of refusing it.
///
/// Cheap checks, never a decode of the whole output (`--rm` does not trust
/// them: the caller keeps the input of a file it skips):
/// - the stamp: a finished output has the input's modification time, to the
///   nanosecond (``OutputFile/stamp(copying:)`` copies it before the name
///   exists, as zstd does), and is a regular file;
/// - the size: a seek table whose frames start at byte 0, end where the table
///   starts and hold as many bytes as the input; without a table (an input
///   of one frame), one frame whose header declares the input's size;
/// - the end: the last frame decodes to the size its entry says, its
///   checksum included (a copy cut short or damaged at its end fails).
package enum FinishedOutput {
    /// The largest output without a seek table that is decoded whole (one
    /// frame: the outputs weir writes without a table are one frame).
    static let largestSoleFrame = 256 << 20

    /// Whether `output` is the finished compression of the input file whose
    /// status is `input`, by the checks above; false when anything cannot
    /// be read.
    ///
    /// - Parameter dictionary: the dictionary the frames were made with.
    package static func isCompression(_ output: String, of input: FileStatus,
                                      dictionary: ZstdDictionary?) -> Bool {
        guard input.isRegularFile, let status = FileStatus.of(path: output), status.isRegularFile,
              !status.isSameFile(as: input),
              status.modificationTime.tv_sec == input.modificationTime.tv_sec,
              status.modificationTime.tv_nsec == input.modificationTime.tv_nsec,
              let file = try? Descriptor.openForReading(output) else { return false }
        defer { file.close() }
        guard let verifier = try? FrameVerifier(dictionary: dictionary, path: output) else { return false }
        let table: SeekTable?
        do throws(WeirError) {
            table = try SeekTable.atEnd(of: file, fileSize: status.size)
        } catch {
            return false
        }
        guard let table else {
            return soleFrame(in: file, size: status.size, decodesTo: input.size, verifier: verifier)
        }
        guard table.dataStart == 0, table.decompressedTotal == input.size else { return false }
        guard let last = table.entries.last else { return input.size == 0 }
        let offset = table.compressedTotal - Int(last.compressedSize)
        guard let frame = try? file.read(count: Int(last.compressedSize), at: offset, operation: .read),
              frame.count == Int(last.compressedSize) else { return false }
        return frame.withUnsafeBytes { bytes in
            (try? verifier.decodedCount(bytes, capacity: Int(last.decompressedSize))) == Int(last.decompressedSize)
        }
    }

    /// Whether the `size` bytes of `file` are one frame that declares
    /// `content` bytes and decodes to them, checksum included.
    private static func soleFrame(in file: Descriptor, size: Int, decodesTo content: Int,
                                  verifier: FrameVerifier) -> Bool {
        guard size <= largestSoleFrame, content <= largestSoleFrame,
            let bytes = try? file.read(count: size, at: 0, operation: .read), bytes.count == size
        else { return false }
        return bytes.withUnsafeBytes { frame in
            guard let header = FrameHeader(startOf: frame), header.kind == .zstd,
                  header.contentSize == UInt64(content) else { return false }
            return (try? verifier.decodedCount(frame, capacity: content)) == content
        }
    }
}
