import Dispatch
import Foundation
import Glibc
import Testing
@testable import WeirSystem

/// A positional source read from start to end through a ``ChunkReader``:
/// the bytes in order whatever order the blocks arrive in, several blocks
/// fetched at once but never more than the depth, and a failed block's
/// error handed to the reader.
@Suite("Positional read-ahead")
struct PositionalReadAheadTests {
    /// Bytes in memory read at offsets, each read slowed (later blocks less,
    /// so they arrive out of order), counting the reads in flight at once.
    final class SlowSource: PositionalSource {
        let bytes: [UInt8]
        let failingAt: Int?
        private let flight = Locked((now: 0, most: 0, reads: 0))

        init(_ bytes: [UInt8], failingAt: Int? = nil) {
            self.bytes = bytes
            self.failingAt = failingAt
        }

        var size: Int { bytes.count }
        var mostAtOnce: Int { flight.current.most }
        var reads: Int { flight.current.reads }

        func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(WeirError) -> Int {
            flight.withLock { state in
                state.now += 1
                state.reads += 1
                state.most = max(state.most, state.now)
            }
            defer { flight.withLock { $0.now -= 1 } }
            usleep(UInt32(20_000 - min(15_000, offset / 100)))
            if let failingAt, offset <= failingAt, failingAt < offset + buffer.count {
                throw WeirError.system(EIO, path: "slow", operation: .read)
            }
            let count = min(buffer.count, bytes.count - offset)
            bytes.withUnsafeBytes { all in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: all[offset ..< offset + count]))
            }
            return count
        }

        func prefetch(_ ranges: [Range<Int>]) throws(WeirError) {}
    }

    /// Bytes in memory whose first block comes in two halves: the second
    /// only once the reader has the first (``gate`` signalled), or after a
    /// long wait that says the first half was held back (``heldBack``).
    final class HalvesSource: PositionalSource {
        let bytes: [UInt8]
        let gate = DispatchSemaphore(value: 0)
        private let waited = Locked(false)

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var size: Int { bytes.count }
        var heldBack: Bool { waited.current }

        func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(WeirError) -> Int {
            try read(into: buffer, at: offset) { _ in }
        }

        func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int,
                  arrived: (Int) -> Void) throws(WeirError) -> Int {
            let count = min(buffer.count, bytes.count - offset)
            let half = offset == 0 ? count / 2 : count
            bytes.withUnsafeBytes { all in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: all[offset ..< offset + half]))
            }
            guard half < count else {
                arrived(count)
                return count
            }
            arrived(half)
            if gate.wait(timeout: .now() + .seconds(20)) == .timedOut { waited.withLock { $0 = true } }
            bytes.withUnsafeBytes { all in
                UnsafeMutableRawBufferPointer(rebasing: buffer[half...])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: all[offset + half ..< offset + count]))
            }
            arrived(count)
            return count
        }

        func prefetch(_ ranges: [Range<Int>]) throws(WeirError) {}
    }

    /// Reads `source` to its end through a ChunkReader in reads of `size`.
    private static func readAll(_ source: SlowSource, size: Int) -> Result<[(count: Int, end: Bool)], WeirError> {
        let reader = ChunkReader(input: Descriptor(source: source, path: "slow"), kind: .regularFile(size: source.size),
                                 chunkSize: size, cleanup: DispatchGroup())
        var reads: [(count: Int, end: Bool)] = []
        var got: [UInt8] = []
        do throws(WeirError) {
            while true {
                let chunk = try reader.start().wait()
                chunk.data.enumerateBytes { region, _, _ in got += region }
                reads.append((chunk.data.count, chunk.endOfInput))
                if chunk.endOfInput { break }
            }
        } catch {
            reader.close(stop: true)
            return .failure(error)
        }
        reader.close(stop: false)
        #expect(got == source.bytes)
        return .success(reads)
    }

    @Test("the bytes in order, whole reads then a short one, blocks fetched several at once and at most 4")
    func inOrderAndBounded() throws {
        let source = SlowSource((0 ..< 1_700_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
        let block = PositionalReadAhead.blockSize(forObjectOf: source.size)
        #expect(block == 256 << 10)
        let reads = try Self.readAll(source, size: 100_000).get()
        #expect(reads.dropLast().allSatisfy { $0.count == 100_000 && !$0.end })
        #expect(reads.last.map { $0.end && $0.count < 100_000 } == true)
        #expect(source.reads == (source.size + block - 1) / block)
        #expect(source.mostAtOnce > 1 && source.mostAtOnce <= PositionalReadAhead.depth, "\(source.mostAtOnce)")
    }

    @Test("a block's first bytes are handed out before the rest of it arrives")
    func arrivedPrefix() throws {
        let source = HalvesSource((0 ..< 1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 40_503 >> 7) })
        let block = PositionalReadAhead.blockSize(forObjectOf: source.size)
        #expect(block == 128 << 10)
        let reader = ChunkReader(input: Descriptor(source: source, path: "halves"),
                                 kind: .regularFile(size: source.size), chunkSize: block / 2, cleanup: DispatchGroup())
        var got: [UInt8] = []
        let first = try reader.start().wait()
        // The rest of block 0 comes only now: had the read waited for the whole block, it had waited for the gate.
        source.gate.signal()
        first.data.enumerateBytes { region, _, _ in got += region }
        #expect(!source.heldBack && first.data.count == block / 2)
        while true {
            let chunk = try reader.start().wait()
            chunk.data.enumerateBytes { region, _, _ in got += region }
            if chunk.endOfInput { break }
        }
        reader.close(stop: false)
        #expect(got == source.bytes)
    }

    @Test("a read that spans more blocks than the depth is served")
    func longReads() throws {
        let source = SlowSource([UInt8](repeating: 9, count: 1_700_000))
        let reads = try Self.readAll(source, size: 1_200_000).get()
        #expect(reads.map(\.count) == [1_200_000, 500_000])
    }

    @Test("a failed block's error is the reader's")
    func failure() {
        let source = SlowSource([UInt8](repeating: 1, count: 1_000_000), failingAt: 600_000)
        let result = Self.readAll(source, size: 100_000)
        guard case .failure(let error) = result else {
            Issue.record("the read succeeded")
            return
        }
        #expect(error.kind.errno == EIO)
    }

    @Test("blocks are an eighth of the object, from 128 KiB to 2 MiB, in whole 64 KiB")
    func blockSizes() {
        #expect(PositionalReadAhead.blockSize(forObjectOf: 100_000) == 128 << 10)
        #expect(PositionalReadAhead.blockSize(forObjectOf: 8 << 20) == 1 << 20)
        #expect(PositionalReadAhead.blockSize(forObjectOf: (8 << 20) + 8) == (1 << 20) + (64 << 10))
        #expect(PositionalReadAhead.blockSize(forObjectOf: 1 << 40) == 2 << 20)
    }
}
