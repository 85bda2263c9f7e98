import Dispatch
import Glibc
import WeirSystem

/// Checks a frame against the input it was just made from (`verify`):
/// decodes it with a decompression context of its own, in one pass, into a
/// buffer of its own, and compares the bytes, so a bit flipped in memory or a
/// fault in the compressor is caught before the frame is written.
///
/// One per compression worker (``CompressionContext/verifier``), used by one
/// thread at a time, so its buffer needs no lock; the buffer grows to the
/// largest chunk checked and lives as long as the worker's context: one chunk
/// more per worker than a run without the check.
package final class FrameVerifier {
    private let context: DecompressionContext
    private var buffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)

    /// - Parameters:
    ///   - dictionary: the dictionary the frames are compressed with.
    ///   - path: the input, for messages.
    package init(dictionary: ZstdDictionary?, path: String) throws(WeirError) {
        // The frames are this process's own: any window they declare is one
        // the compressor chose, so no limit below libzstd's largest.
        context = try DecompressionContext(
            windowLogMax: Zstd.windowLogMax, verifyChecksum: true,
            dictionary: dictionary.map { dictionary throws(WeirError) in
                try DecompressionDictionary(dictionary)
            }, path: path)
    }

    deinit { buffer.deallocate() }

    /// For tests of the check: flips one bit in the middle of `frame`, as a
    /// bad memory cell would.
    package static func damage(_ frame: UnsafeMutableRawBufferPointer) {
        guard !frame.isEmpty else { return }
        frame[frame.count / 2] ^= 0x10
    }

    /// Throws unless `frame` decodes, checksum included, to exactly `input`.
    ///
    /// - Parameters:
    ///   - index: the frame's number in its output, for the message.
    ///   - offset: where `input` starts in the input, for the message.
    package func check(_ frame: UnsafeRawBufferPointer, against input: DispatchData, frame index: Int, offset: Int,
                       path: String) throws(WeirError) {
        let decoded = try decode(frame, expecting: input.count, frame: index, offset: offset, path: path)
        var difference: Int?
        var position = 0
        input.enumerateBytes { region, _, stop in
            difference = Self.firstDifference(
                UnsafeRawBufferPointer(region),
                UnsafeRawBufferPointer(rebasing: decoded[position..<(position + region.count)])
            )
                .map { position + $0 }
            position += region.count
            stop = difference != nil
        }
        if let difference {
            throw WeirError.verificationFailed(path: path, frame: index, offset: offset, at: offset + difference)
        }
    }

    /// The same, for an input in one piece.
    package func check(_ frame: UnsafeRawBufferPointer, against input: UnsafeRawBufferPointer, frame index: Int,
                       offset: Int, path: String) throws(WeirError) {
        let decoded = try decode(frame, expecting: input.count, frame: index, offset: offset, path: path)
        if let difference = Self.firstDifference(input, UnsafeRawBufferPointer(decoded)) {
            throw WeirError.verificationFailed(path: path, frame: index, offset: offset, at: offset + difference)
        }
    }

    /// The number of bytes `frame` decodes to, checksum included, in room
    /// for `capacity` (a frame that decodes to more fails).
    package func decodedCount(_ frame: UnsafeRawBufferPointer, capacity: Int) throws(WeirError) -> Int {
        if buffer.count < capacity {
            buffer.deallocate()
            buffer = .allocate(byteCount: capacity, alignment: 16)
        }
        return try context.decompressFrame(frame, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<capacity]))
    }

    /// `frame` decoded into the buffer, which must then hold `count` bytes.
    private func decode(_ frame: UnsafeRawBufferPointer, expecting count: Int, frame index: Int, offset: Int,
                        path: String) throws(WeirError) -> UnsafeMutableRawBufferPointer {
        let decoded: Int
        do throws(WeirError) {
            decoded = try decodedCount(frame, capacity: count)
        } catch {
            throw WeirError.verificationFailed(path: path, frame: index, offset: offset, at: nil, cause: error)
        }
        guard decoded == count else {
            throw WeirError.verificationFailed(path: path, frame: index, offset: offset, at: offset + decoded)
        }
        return UnsafeMutableRawBufferPointer(rebasing: buffer[..<count])
    }

    /// Where `a` and `b`, of the same length, first differ, or nil.
    private static func firstDifference(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int? {
        guard let first = a.baseAddress, let second = b.baseAddress, memcmp(first, second, a.count) != 0 else {
            return nil
        }
        return zip(a, b).prefix { $0 == $1 }.count
    }
}
