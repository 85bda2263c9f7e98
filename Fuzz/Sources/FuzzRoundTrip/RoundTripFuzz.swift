import FoundationEssentials
import FuzzSupport
@testable import Weir
@testable import WeirPipeline
@testable import WeirSeekable
@testable import WeirSystem

// A round trip: compress with options chosen from the input, check the
// frames, list them, decompress, compare.
//
// Input: two option bytes, then the data. Byte 0: bits 0–2 the level (1, 3,
// -1, -7, 2, 5, 9, 15), 3–4 the chunk size (8 MiB split per worker, 64 KiB,
// 4096, 1000), 5 no checksum, 6 no seek table, 7 no mmap. Byte 1: bit 0 one
// worker instead of two, 1 through the async in-memory API
// (`Compressor.compress(Data)`, `Decompressor.decompress(Data)`) instead of
// the pipelines on in-memory files, 2 one chunk in flight, 3–5 the
// decoder's read size.
//
// Properties: libzstd decodes the output to the input; `-l` lists it with
// one frame per chunk (from its seek table when it has one), the content
// size and the checksums; weir decodes it back, without a warning.

let levels = [1, 3, -1, -7, 2, 5, 9, 15]
let chunkSizes = [CompressionOptions.defaultChunkSize, 65536, 4096, 1000]
let readSizes = [1 << 20, 65536, 4096, 1000, 333, 64, 13, 1 << 20]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRoundTrip(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let options = OptionBytes(fuzzInput(data, size), count: 2)
    let payload = options.payload
    let original = Array(payload)
    var compression = CompressionOptions(level: levels[options.bits(0, 0, 3)], threads: options.flag(1, 0) ? 1 : 2,
                                         chunkSize: chunkSizes[options.bits(0, 3, 2)],
                                         checksum: !options.flag(0, 5), seekTable: !options.flag(0, 6),
                                         mapInput: !options.flag(0, 7))
    compression.splitSmallInputs = options.bits(0, 3, 2) == 0  // as the command line: off with --chunk-size
    if options.flag(1, 2) { compression.chunksInFlight = 1 }
    var decoding = DecompressionOptions(readSize: readSizes[options.bits(1, 3, 3)], threads: compression.threads)
    decoding.mapInput = compression.mapInput
    let viaAPI = options.flag(1, 1)

    // Compress.
    let compressed: [UInt8]
    let chunk: Int
    if viaAPI {
        let result = runBlocking { [compression] () -> Result<Data, WeirError> in
            do throws(WeirError) {
                return .success(try await Compressor(options: compression).compress(Data(original)))
            } catch {
                return .failure(error)
            }
        }
        guard case .success(let bytes) = result else { require(false, "compress(Data) failed: \(result)"); return 0 }
        compressed = Array(bytes)
        chunk = compression.chunkSize  // a pipe: no size to fit the chunks to
    } else {
        let input = MemoryFile(payload)
        let output = MemoryFile()
        let statistics: Statistics
        do throws(WeirError) {
            statistics = try CompressionPipeline(input: .descriptor(Descriptor(input.fd, path: "fuzz-in")),
                                                 output: .descriptor(Descriptor(output.fd, path: "fuzz-out")),
                                                 inputName: "fuzz-in", outputName: "fuzz-out", options: compression).run()
        } catch {
            require(false, "compression failed: \(error)")
            return 0
        }
        compressed = output.contents
        chunk = compression.fitted(toInputSize: payload.count).chunkSize
        require(statistics.bytesIn == payload.count, "compressed \(statistics.bytesIn) of \(payload.count) bytes")
        require(statistics.bytesOut == compressed.count, "bytesOut \(statistics.bytesOut), file \(compressed.count)")
    }
    let frames = max(1, (payload.count + chunk - 1) / chunk)

    // libzstd decodes it.
    let reference = compressed.withUnsafeBytes { ReferenceDecoder.decode($0) }
    require(reference == .decoded(original), "libzstd does not decode weir's output to the input")

    // -l lists it.
    let file = compressed.withUnsafeBytes { MemoryFile($0) }
    do throws(WeirError) {
        let listing = try FrameListing.read(path: file.path)
        require(listing.zstdFrameCount == frames, "listed \(listing.zstdFrameCount) frames, expected \(frames)")
        // A one-frame output has nothing to seek: no table (as zstd's bytes).
        let tabled = compression.seekTable && frames > 1
        require(listing.skippableFrameCount == (tabled ? 1 : 0), "listed skippable frames")
        require(listing.fromSeekTable == tabled, "listed from the seek table: \(listing.fromSeekTable)")
        require(listing.decompressedSize == payload.count, "listed \(String(describing: listing.decompressedSize)) bytes")
        require(listing.hasChecksum == compression.checksum, "listed checksums: \(listing.hasChecksum)")
        require(listing.warnings.isEmpty, "listing warnings: \(listing.warnings)")
    } catch {
        require(false, "listing failed: \(error)")
    }

    // weir decodes it.
    let restored: [UInt8]
    if viaAPI {
        let result = runBlocking { [decoding] () -> Result<Data, WeirError> in
            do throws(WeirError) {
                return .success(try await Decompressor(options: decoding).decompress(Data(compressed)))
            } catch {
                return .failure(error)
            }
        }
        guard case .success(let bytes) = result else { require(false, "decompress(Data) failed: \(result)"); return 0 }
        restored = Array(bytes)
    } else {
        let output = MemoryFile()
        do throws(WeirError) {
            let statistics = try DecompressionPipeline(input: .descriptor(Descriptor(file.fd, path: "fuzz-in")),
                                                       output: .descriptor(Descriptor(output.fd, path: "fuzz-out")),
                                                       inputName: "fuzz-in", outputName: "fuzz-out", options: decoding).run()
            require(statistics.warnings.isEmpty, "decoding warnings: \(statistics.warnings)")
            require(statistics.frames == frames, "decoded \(statistics.frames) frames, expected \(frames)")
        } catch {
            require(false, "decompression failed: \(error)")
        }
        restored = output.contents
    }
    require(restored == original, "round trip: \(restored.count) bytes back from \(original.count)")
    return 0
}
