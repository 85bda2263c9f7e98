import CFormats
import Dispatch
import Glibc
import WeirSystem

/// One worker's encoder of a chunk into one independent member of another
/// format than zstd (`--format=gzip|xz|lz4`): a gzip member, an xz stream or
/// an lz4 frame. Each decodes alone, and their concatenation is one valid
/// file of the format, so chunks are encoded side by side as zstd frames are.
///
/// Levels are zstd's, mapped as zstd 1.5.4 maps them (programs/fileio.c):
/// gzip clamped to zlib's 1…9, xz to 0…9, lz4 given to liblz4 as it is.
/// `--format=lzma` is the exception: a .lzma file is one stream, which
/// cannot be cut, so its chunks are encoded in order by one worker into one
/// stream (``encode(_:into:last:path:)`` with `last` on the final chunk).
/// A worker owns its encoder; nothing in it is shared.
package final class MemberEncoder {
    let format: CompressedFormat
    let level: Int
    private var deflater: OpaquePointer?
    private var lz4: OpaquePointer?
    private var lz4Preferences = LZ4F_preferences_t()
    private let xz: UnsafeMutablePointer<lzma_stream>
    /// Whether a .lzma stream has begun and not yet ended.
    private var lzmaStarted = false
    /// A chunk of several regions, flattened for libdeflate (whole buffers only).
    private var scratch: UnsafeMutableRawBufferPointer?
    /// Told of the input the encoder has taken, as it takes it: xz and lzma
    /// in steps of 256 KiB (their levels are slow enough for a member to
    /// take seconds: bench/results/2026-11-27-comment-numbers.md), gzip and lz4
    /// once per member. On the worker.
    package var consumed: (@Sendable (Int) -> Void)?

    /// Creates the encoder of `format` (not zstd) at zstd's `level`.
    package init(format: CompressedFormat, level: Int, path: String) throws(WeirError) {
        self.format = format
        xz = .allocate(capacity: 1)
        xz.initialize(to: lzma_stream())
        switch format {
        case .gzip:
            self.level = GzipMember.level(forZstdLevel: level)
            deflater = libdeflate_alloc_compressor(Int32(self.level))
            if deflater == nil { throw .outOfMemory(path: path, operation: .compress, creating: "a gzip compressor") }
        case .lz4:
            self.level = min(level, 12)
            lz4Preferences = Self.lz4Preferences(level: self.level)
            var context: OpaquePointer?
            if LZ4F_isError(LZ4F_createCompressionContext(&context, UInt32(LZ4F_VERSION))) != 0 || context == nil {
                throw .outOfMemory(path: path, operation: .compress, creating: "an lz4 compressor")
            }
            lz4 = context
        case .xz, .lzma, .zstd:
            self.level = max(0, min(level, 9))
        }
    }

    deinit {
        libdeflate_free_compressor(deflater)
        LZ4F_freeCompressionContext(lz4)
        lzma_end(xz)
        xz.deallocate()
        scratch?.deallocate()
    }

    /// zstd's lz4 settings: 4 MiB blocks, linked, a content checksum.
    private static func lz4Preferences(level: Int) -> LZ4F_preferences_t {
        var preferences = LZ4F_preferences_t()
        preferences.compressionLevel = Int32(level)
        preferences.frameInfo.blockSizeID = LZ4F_max4MB
        preferences.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled
        return preferences
    }

    /// The most bytes one member of a `size`-byte chunk takes.
    package static func bound(format: CompressedFormat, size: Int) -> Int {
        switch format {
        case .gzip: return GzipMember.bound(size)
        case .lz4:
            var preferences = lz4Preferences(level: 0)
            return LZ4F_compressFrameBound(size, &preferences)
        case .xz, .zstd: return lzma_stream_buffer_bound(size)
        // A chunk's input may flush what the encoder held from the one
        // before (its lookahead, the range coder's bytes): 64 KiB more.
        case .lzma: return lzma_stream_buffer_bound(size) + (64 << 10)
        }
    }

    /// Encodes `chunk` (possibly empty, possibly of several regions) as one
    /// member at the start of `output`, of at least ``bound(format:size:)``
    /// bytes, and returns its size.
    package func encode(_ chunk: DispatchData, into output: UnsafeMutableRawBufferPointer, last: Bool = true,
                        path: String) throws(WeirError) -> Int {
        // The regions point into `chunk`, which outlives this call.
        var regions: [UnsafeRawBufferPointer] = []
        chunk.enumerateBytes { region, _, _ in regions.append(UnsafeRawBufferPointer(region)) }
        switch format {
        case .gzip:
            defer { consumed?(chunk.count) }
            return try encodeGzip(regions, total: chunk.count, into: output, path: path)
        case .lz4:
            defer { consumed?(chunk.count) }
            return try encodeLz4(regions, total: chunk.count, into: output, path: path)
        case .xz, .zstd: return try encodeXz(regions, into: output, path: path)
        case .lzma: return try encodeLzma(regions, into: output, last: last, path: path)
        }
    }

    private func encodeGzip(_ regions: [UnsafeRawBufferPointer], total: Int, into output: UnsafeMutableRawBufferPointer,
                            path: String) throws(WeirError) -> Int {
        var whole = regions.first ?? UnsafeRawBufferPointer(start: nil, count: 0)
        if regions.count > 1 {
            let flat: UnsafeMutableRawBufferPointer
            if let kept = scratch, kept.count >= total {
                flat = kept
            } else {
                scratch?.deallocate()
                flat = .allocate(byteCount: total, alignment: 16)
                scratch = flat
            }
            var at = 0
            for region in regions {
                UnsafeMutableRawBufferPointer(rebasing: flat[at..<at + region.count]).copyMemory(from: region)
                at += region.count
            }
            whole = UnsafeRawBufferPointer(rebasing: flat[0..<total])
        }
        // The gzip encoder made its compressor in `init` (or threw there).
        guard let deflater else { throw .outOfMemory(path: path, operation: .compress, creating: "a gzip compressor") }
        return try GzipMember.write(whole, with: deflater, level: level, into: output, path: path)
    }

    private func encodeLz4(_ regions: [UnsafeRawBufferPointer], total: Int, into output: UnsafeMutableRawBufferPointer,
                           path: String) throws(WeirError) -> Int {
        var preferences = lz4Preferences
        preferences.frameInfo.contentSize = UInt64(total)
        var at = LZ4F_compressBegin(lz4, output.baseAddress, output.count, &preferences)
        try check(lz4: at, path: path)
        for region in regions where region.count > 0 {
            let written = LZ4F_compressUpdate(lz4, output.baseAddress.map { $0 + at }, output.count - at,
                                              region.baseAddress, region.count, nil)
            try check(lz4: written, path: path)
            at += written
        }
        let end = LZ4F_compressEnd(lz4, output.baseAddress.map { $0 + at }, output.count - at, nil)
        try check(lz4: end, path: path)
        return at + end
    }

    private func check(lz4 code: Int, path: String) throws(WeirError) {
        if LZ4F_isError(code) != 0 {
            throw .formatLibrary(.lz4, path: path, operation: .compress, String(cString: LZ4F_getErrorName(code)))
        }
    }

    /// The next part of the one .lzma stream (an end marker closes it: the
    /// size is not written, as xz --format=lzma writes it from a pipe).
    private func encodeLzma(_ regions: [UnsafeRawBufferPointer], into output: UnsafeMutableRawBufferPointer,
                            last: Bool, path: String) throws(WeirError) -> Int {
        if !lzmaStarted {
            var settings = lzma_options_lzma()
            guard lzma_lzma_preset(&settings, UInt32(level)) == 0 else {
                throw .lzma(LZMA_OPTIONS_ERROR, .lzma, path: path, operation: .compress)
            }
            let code = lzma_alone_encoder(xz, &settings)
            guard code == LZMA_OK else { throw .lzma(code, .lzma, path: path, operation: .compress) }
            lzmaStarted = true
        }
        return try drive(regions, into: output, finish: last, format: .lzma, path: path)
    }

    /// One whole .xz stream per chunk (CRC64, as zstd and xz write it).
    private func encodeXz(_ regions: [UnsafeRawBufferPointer], into output: UnsafeMutableRawBufferPointer,
                          path: String) throws(WeirError) -> Int {
        let code = lzma_easy_encoder(xz, UInt32(level), LZMA_CHECK_CRC64)
        guard code == LZMA_OK else { throw .lzma(code, .xz, path: path, operation: .compress) }
        return try drive(regions, into: output, finish: true, format: .xz, path: path)
    }

    /// Feeds `regions` to liblzma's encoder into `output`, then ends its
    /// stream when `finish`; returns the bytes written.
    private func drive(_ regions: [UnsafeRawBufferPointer], into output: UnsafeMutableRawBufferPointer, finish: Bool,
                       format: CompressedFormat, path: String) throws(WeirError) -> Int {
        var code = LZMA_OK
        xz.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: UInt8.self)
        xz.pointee.avail_out = output.count
        let step = consumed == nil ? Int.max : 1 << 18
        for region in regions where region.count > 0 {
            var at = 0
            while at < region.count {
                let size = min(step, region.count - at)
                xz.pointee.next_in = region.baseAddress.map { ($0 + at).assumingMemoryBound(to: UInt8.self) }
                xz.pointee.avail_in = size
                while xz.pointee.avail_in > 0 {
                    code = lzma_code(xz, LZMA_RUN)
                    guard code == LZMA_OK else { throw .lzma(code, format, path: path, operation: .compress) }
                }
                consumed?(size)
                at += size
            }
        }
        if finish {
            repeat { code = lzma_code(xz, LZMA_FINISH) } while code == LZMA_OK
            guard code == LZMA_STREAM_END else { throw .lzma(code, format, path: path, operation: .compress) }
            lzmaStarted = false
        }
        return output.count - xz.pointee.avail_out
    }
}
