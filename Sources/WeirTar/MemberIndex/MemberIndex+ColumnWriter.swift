import CZstd
import Glibc
import WeirFormats
import WeirSystem

extension MemberIndex {
    /// Encodes members into version 2 as a scan finds them. While the
    /// compression runs it holds one block of raw columns: each block that
    /// fills goes as it is to a file (``IndexSpill``), and the blocks are
    /// compressed at the end, from the file, when the run's chunks are no
    /// longer in flight, so the compressor's memory is not added to theirs
    /// (it was, +2.5 MiB at -3 through a pipe, and more at -9). Where no file
    /// can be made or written, blocks are compressed as they fill, as before.
    /// Used by one thread at a time.
    package final class ColumnWriter: TarMemberSink {
        /// The block's columns and what each member is coded against, behind
        /// pointers of their own: a member's appends pay no dynamic
        /// exclusivity check on the class's fields (issue 82).
        private let columns: UnsafeMutablePointer<ColumnBytes>
        private let state: UnsafeMutablePointer<State>
        private static let columnCount = Column.allCases.count

        /// What changes with every member.
        private struct State {
            var raw = 0
            var inBlock = 0
            var count = 0
            /// The previous member's end, path, mtime and names, which the
            /// next is coded against; the names in raw buffers of their own
            /// (as the columns, for the same reason), freed in `deinit`.
            var previousEnd = 0
            var previousPath = ColumnBytes(capacity: 256)
            var previousSlashes = 0
            /// Where the previous path's last folder ends: just past its last '/' (0: none).
            var previousFolders = 0
            var previousMtime: Int64 = 0
            /// The previous owners as the member gave them (a NUL and more
            /// may follow the name), and the length of each name before it.
            var previousUname = ColumnBytes(capacity: 64)
            var previousGname = ColumnBytes(capacity: 64)
            var previousUnameLength = 0
            var previousGnameLength = 0
            /// Whether there is a previous name yet (the first member's are always written).
            var hasPreviousNames = false
        }

        package var count: Int { state.pointee.count }
        /// A block's head (member count, column lengths), reused.
        private var head: [UInt8] = []
        /// Whether the compressor has been given anything yet.
        private var started = false
        /// Blocks that filled, raw, in order, waiting for the end; nil before
        /// the first or when they are compressed as they fill.
        private var blocks: IndexSpill?
        /// Whether filled blocks may still wait in ``blocks`` (false once a
        /// file could not be made or written).
        private var defers = true
        /// What the compressor gives back, reused (made at its first call).
        private var output: [UInt8] = []
        private static let outputSize = 64 << 10
        /// The compressor's table sizes at most (level 3's).
        private static let largestHashLog: UInt32 = 17
        private static let largestChainLog: UInt32 = 16
        /// The stream's compressed bytes so far: those past ``spillBound`` in
        /// ``spill`` (in order), the rest here.
        private var compressed: [UInt8] = []
        private var spill: IndexSpill?
        /// Whether bytes may still go to a spill file (false once one could
        /// not be made or written).
        private var spills = true
        private let context: OpaquePointer?
        private let level: Int
        /// The first failure (libzstd's, or reading the blocks back);
        /// reported by ``frame(endedEarly:endOffset:contentSize:path:)``.
        private var failure: String?

        /// Compressed bytes kept in memory before the rest go to a spill file.
        private let spillBound: Int
        /// Raw column bytes that close a block (``MemberIndex/blockBytes``).
        private let blockBytes: Int
        /// Where the spill files go (nil: `TMPDIR`, else /tmp), and what the blocks' file takes at most.
        private let spillFolder: String?
        private let blocksCapacity: Int

        /// A writer compressing at `level`, keeping `spillBound` compressed
        /// bytes in memory (``MemberIndex/spillBound``) and closing a block at
        /// `blockBytes` (``MemberIndex/blockBytes``): the tests' are smaller.
        /// Its files go in `spillFolder` (else `TMPDIR`, else /tmp); the one
        /// its blocks wait in takes `blocksCapacity` bytes at most (the tests',
        /// to stop it short as a full disk would).
        package init(level: Int = 3, spillBound: Int = MemberIndex.spillBound,
                     blockBytes: Int = MemberIndex.blockBytes, spillFolder: String? = nil,
                     blocksCapacity: Int = .max) {
            self.level = level
            self.spillBound = spillBound
            self.spillFolder = spillFolder
            self.blocksCapacity = blocksCapacity
            self.blockBytes = blockBytes
            // Every buffer at its full size at once, never grown: weir's
            // allocator keeps one arena and never hands freed memory back,
            // so buffers that grew as members came were carved out of a chunk
            // buffer freed a moment before, and the next chunk's buffer then
            // took fresh memory (+8 MiB, one chunk, in some runs through a pipe
            // at -1). Untouched capacity costs no memory.
            let members = MemberIndex.blockBytes / 24 + 1
            let columns = UnsafeMutablePointer<ColumnBytes>.allocate(capacity: Self.columnCount)
            for column in Column.allCases {
                let capacity = switch column {
                case .pathRest: MemberIndex.blockBytes + 4096
                case .size0, .size1, .size2, .type, .uname, .gname: members
                default: 3 * members
                }
                (columns + column.rawValue).initialize(to: ColumnBytes(capacity: capacity))
            }
            self.columns = columns
            state = .allocate(capacity: 1)
            state.initialize(to: State())
            head.reserveCapacity(64)
            compressed.reserveCapacity(spillBound + Self.outputSize)
            context = ZSTD_createCCtx()
            if let context {
                ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, Int32(level))
                ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1)
                ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, MemberIndex.windowLog)
                // Tables no larger than level 3's: above it libzstd's grow to
                // several MiB (about 12 at 9) for a window of 1 MiB; capped,
                // the Linux tarball's index at -9 is 0.8% larger.
                let tables = ZSTD_getCParams(Int32(level), 0, 0)
                if tables.hashLog > Self.largestHashLog {
                    ZSTD_CCtx_setParameter(context, ZSTD_c_hashLog, Int32(Self.largestHashLog))
                }
                if tables.chainLog > Self.largestChainLog {
                    ZSTD_CCtx_setParameter(context, ZSTD_c_chainLog, Int32(Self.largestChainLog))
                }
            }
        }

        deinit {
            ZSTD_freeCCtx(context)
            for index in 0 ..< Self.columnCount { columns[index].deallocate() }
            columns.deinitialize(count: Self.columnCount).deallocate()
            state.pointee.previousPath.deallocate()
            state.pointee.previousUname.deallocate()
            state.pointee.previousGname.deallocate()
            state.deinitialize(count: 1).deallocate()
        }

        /// Takes `member`, the next member in archive order.
        package func append(_ member: Member) {
            Record.with(member) { append($0) }
        }

        /// Takes `member`, the next member in archive order; its names are
        /// read during the call only.
        package func append(_ member: Record) {
            let columns = columns
            @inline(__always) func put(_ column: Column, _ value: UInt64) {
                columns[column.rawValue].appendUvarint(value)
            }
            @inline(__always) func signed(_ column: Column, _ value: Int64) {
                columns[column.rawValue].appendUvarint(UInt64(bitPattern: value << 1 ^ value >> 63))
            }
            let state = state
            put(.gap, UInt64(max(0, member.headerOffset - state.pointee.previousEnd)))
            put(.headerBlocks, UInt64(max(0, member.headerLength / 512 - 1)))
            let predicted = MemberIndex.predictedData(type: member.type, size: member.size)
            signed(.dataExtra, Int64(member.dataLength - predicted))
            let size = UInt64(max(0, member.size))
            columns[Column.size0.rawValue].append(UInt8(truncatingIfNeeded: size))
            columns[Column.size1.rawValue].append(UInt8(truncatingIfNeeded: size >> 8))
            columns[Column.size2.rawValue].append(UInt8(truncatingIfNeeded: size >> 16))
            put(.sizeHigh, size >> 24)
            signed(.mtime, member.mtime &- state.pointee.previousMtime)
            columns[Column.type.rawValue].append(member.type)
            put(.mode, UInt64(member.mode))
            put(.uid, UInt64(max(0, member.uid)))
            put(.gid, UInt64(max(0, member.gid)))
            appendPath(Self.untilNUL(member.path))
            columns[Column.link.rawValue].append(Self.untilNUL(member.link))
            columns[Column.link.rawValue].append(0)
            let known = state.pointee.hasPreviousNames
            Self.appendName(member.uname, known: known, after: &state.pointee.previousUname,
                            length: &state.pointee.previousUnameLength, to: &columns[Column.uname.rawValue])
            Self.appendName(member.gname, known: known, after: &state.pointee.previousGname,
                            length: &state.pointee.previousGnameLength, to: &columns[Column.gname.rawValue])
            state.pointee.hasPreviousNames = true
            if member.type == UInt8(ascii: "3") || member.type == UInt8(ascii: "4") {
                put(.device, UInt64(max(0, member.devmajor)))
                put(.device, UInt64(max(0, member.devminor)))
            }
            state.pointee.previousEnd = member.end
            state.pointee.previousMtime = member.mtime
            state.pointee.count += 1
            state.pointee.inBlock += 1
            state.pointee.raw += member.path.count + 24
            if state.pointee.raw >= blockBytes { flushBlock(end: false) }
        }

        /// A name up to its first NUL (the index keeps no NUL in a name).
        @inline(__always)
        private static func untilNUL(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return bytes }
            let end = memchr(base, 0, bytes.count).map { UnsafeRawPointer($0) - base } ?? bytes.count
            return UnsafeRawBufferPointer(start: base, count: end)
        }

        /// The path coded against the previous one by folders: the folders
        /// the two share are kept, the rest written.
        ///
        /// Only the tails past the prefix the two share are read for '/': the
        /// folders kept are the previous path's less those that end in its
        /// tail, and the new path's are those kept and those of its tail. A
        /// listing's neighbours share most of their path, so this reads a
        /// name's last part or two, not the whole path (which cost the scan
        /// 650 instructions a member on the Linux tarball); and where the two
        /// share all the previous path's folders, as files of one folder do,
        /// the previous path's tail need not be read at all.
        private func appendPath(_ name: UnsafeRawBufferPointer) {
            let columns = columns
            let state = state
            let previous = state.pointee.previousPath.bytes
            let shared = Self.sharedPrefix(name, previous)
            // The folders kept end at `cut` (0: none); `popped`, the previous path's others.
            let cut: Int, popped: Int
            if shared >= state.pointee.previousFolders {
                (cut, popped) = (state.pointee.previousFolders, 0)
            } else {
                popped = Self.slashes(in: previous, from: shared).count
                var end = shared
                while end > 0, name[end - 1] != UInt8(ascii: "/") { end -= 1 }
                cut = end
            }
            let rest = UnsafeRawBufferPointer(rebasing: name[cut...])
            columns[Column.pathPop.rawValue].appendUvarint(UInt64(popped))
            columns[Column.pathRest.rawValue].append(rest)
            columns[Column.pathRest.rawValue].append(0)
            // The previous path's first `cut` bytes are the name's already.
            state.pointee.previousPath.keep(cut)
            state.pointee.previousPath.append(rest)
            let tail = Self.slashes(in: name, from: shared)
            state.pointee.previousSlashes += tail.count - popped
            state.pointee.previousFolders = tail.count > 0 ? tail.last + 1 : cut
        }

        /// How many first bytes `a` and `b` share, eight compared at a time.
        private static func sharedPrefix(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
            let limit = min(a.count, b.count)
            var index = 0
            // Each load lies inside both: index + 8 <= limit.
            while index + 8 <= limit {
                let difference = a.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                    ^ b.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                if difference != 0 {
                    // The first byte that differs: the lowest in memory order.
                    return index + UInt64(littleEndian: difference).trailingZeroBitCount >> 3
                }
                index += 8
            }
            while index < limit, a[index] == b[index] { index += 1 }
            return index
        }

        /// The '/' bytes of `bytes` from offset `start` on: how many, and
        /// where the last is (meaningless when none), a word at a time.
        private static func slashes(in bytes: UnsafeRawBufferPointer, from start: Int) -> (count: Int, last: Int) {
            var count = 0, last = 0
            var index = start
            while index < bytes.count {
                // Byte k of `word` is the byte at `at + k`; every load lies inside `bytes`.
                var word: UInt64
                let at: Int
                if index + 8 <= bytes.count {
                    at = index
                    word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self))
                } else if bytes.count >= 8 {
                    // The buffer's last word, its bytes before `index` (1 to 7, read already) made 0.
                    at = bytes.count - 8
                    word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self))
                    word = (word &>> (8 * (index - at))) &<< (8 * (index - at))
                } else {
                    // A buffer shorter than a word: a byte at a time.
                    for offset in index ..< bytes.count where bytes[offset] == UInt8(ascii: "/") {
                        (count, last) = (count + 1, offset)
                    }
                    return (count, last)
                }
                // 0x80 in each byte that is '/' (0x2F), exactly: a byte of
                // `other` is 0 there, and no borrow crosses bytes (each low
                // seven bits plus 0x7F stays below 0x100). Dropped bytes are
                // 0, not '/'.
                let other = word ^ 0x2F2F_2F2F_2F2F_2F2F
                let found = ~(((other & 0x7F7F_7F7F_7F7F_7F7F) &+ 0x7F7F_7F7F_7F7F_7F7F) | other)
                    & 0x8080_8080_8080_8080
                if found != 0 {
                    count += found.nonzeroBitCount
                    last = at + (63 - found.leadingZeroBitCount) >> 3
                }
                index = at + 8
            }
            return (count, last)
        }

        /// An owner's name, `given` up to its first NUL: 0 when it is the
        /// previous member's (`known`: there is one), else 1, the name and a
        /// NUL. `previous` holds the previous member's as given, its name
        /// `length` bytes: the same bytes given make the same name, so the
        /// usual owner, the previous one again, is not searched for a NUL.
        private static func appendName(_ given: UnsafeRawBufferPointer, known: Bool,
                                       after previous: inout ColumnBytes, length: inout Int,
                                       to column: inout ColumnBytes) {
            if known, Self.same(given, previous.bytes) {
                column.append(0)
                return
            }
            let name = untilNUL(given)
            // Compared before `previous` takes the new bytes.
            let sameName = known && Self.same(name, UnsafeRawBufferPointer(start: previous.base, count: length))
            previous.set(given)
            length = name.count
            if sameName {
                column.append(0)
                return
            }
            column.append(1)
            column.append(name)
            column.append(0)
        }

        /// Whether `a` and `b` hold the same bytes.
        @inline(__always)
        private static func same(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
            guard a.count == b.count else { return false }
            guard let left = a.baseAddress, let right = b.baseAddress, !a.isEmpty else { return true }
            return memcmp(left, right, a.count) == 0
        }

        /// Sends the block's columns to the compressor (and, with `end`, ends
        /// its frame); a block that fills before the end waits in ``blocks``.
        ///
        /// The block's head (its member count and column lengths) and then
        /// each column go to the compressor from where they are, not joined
        /// into one buffer first: a joined block would be one more MiB held
        /// (a peak through a pipe that grew with a tar past a block's
        /// members). libzstd's streaming output does not depend on how its
        /// input is cut into calls, so the frame's bytes are the same.
        private func flushBlock(end: Bool) {
            head.removeAll(keepingCapacity: true)
            let hasMembers = state.pointee.inBlock > 0
            if hasMembers {
                head.appendUvarint(UInt64(state.pointee.inBlock))
                for index in 0 ..< Self.columnCount { head.appendUvarint(UInt64(columns[index].count)) }
            }
            (state.pointee.raw, state.pointee.inBlock) = (0, 0)
            guard context != nil, failure == nil else {
                if failure == nil { failure = "libzstd: out of memory" }
                return
            }
            if !end, defers, deferBlock() { return }
            if end, let blocks {
                // The blocks that waited go first, read back a piece at a time.
                self.blocks = nil
                compressWaiting(blocks)
            }
            if end, !started, hasMembers {
                // An index of one block goes to libzstd in one call that ends
                // the frame, as it always has: libzstd then sizes its tables
                // to it and writes its content size, and the bytes stay those
                // of the versions before.
                var whole = head
                whole.reserveCapacity(head.count + (0 ..< Self.columnCount).reduce(0) { $0 + columns[$1].count })
                for index in 0 ..< Self.columnCount {
                    whole.append(contentsOf: columns[index].bytes)
                    columns[index].removeAll()
                }
                whole.withUnsafeBytes { compress($0, end: true) }
                return
            }
            let pieces = hasMembers ? Self.columnCount : 0
            head.withUnsafeBytes { compress($0, end: end && pieces == 0) }
            for index in 0 ..< pieces {
                compress(columns[index].bytes, end: end && index == pieces - 1)
                columns[index].removeAll()
            }
        }

        /// Writes the block (head and columns) to ``blocks``; true when all of
        /// it went there. When a write falls short, the blocks already there
        /// and the part of this one written are compressed now, and the
        /// block's columns are left for the caller to compress: from then on
        /// blocks are compressed as they fill.
        private func deferBlock() -> Bool {
            if blocks == nil { blocks = IndexSpill(folder: spillFolder, capacity: blocksCapacity) }
            guard let blocks else {
                defers = false
                return false
            }
            let before = blocks.size
            var whole = head.withUnsafeBytes { blocks.append($0) } == head.count
            for index in 0 ..< Self.columnCount where whole {
                whole = blocks.append(columns[index].bytes) == columns[index].count
            }
            if whole {
                for index in 0 ..< Self.columnCount { columns[index].removeAll() }
                return true
            }
            // The part of this block that went to the file is compressed with
            // the blocks before it, then dropped from what is left to compress.
            defers = false
            self.blocks = nil
            compressWaiting(blocks)
            var written = blocks.size - before
            let cut = min(written, head.count)
            head.removeFirst(cut)
            written -= cut
            for index in 0 ..< Self.columnCount where written > 0 {
                let cut = min(written, columns[index].count)
                columns[index].removeFirst(cut)
                written -= cut
            }
            return false
        }

        /// Compresses the blocks that waited in `waiting`, read back a piece
        /// at a time; a read that fails is the writer's failure.
        private func compressWaiting(_ waiting: IndexSpill) {
            if !waiting.forEachPiece(size: MemberIndex.spillBound, { compress($0, end: false) }) {
                failure = failure ?? "the member index's blocks could not be read back from their file"
            }
        }

        /// Compresses `source` into the stream; with `end`, ends the frame.
        private func compress(_ source: UnsafeRawBufferPointer, end: Bool) {
            guard let context, failure == nil else { return }
            started = true
            if output.isEmpty { output = [UInt8](repeating: 0, count: Self.outputSize) }
            var input = ZSTD_inBuffer(src: source.baseAddress, size: source.count, pos: 0)
            while true {
                let (result, produced) = output.withUnsafeMutableBytes { out in
                    var buffer = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: 0)
                    let result = ZSTD_compressStream2(context, &buffer, &input, end ? ZSTD_e_end : ZSTD_e_continue)
                    return (result, buffer.pos)
                }
                if ZSTD_isError(result) != 0 {
                    failure = "libzstd: " + String(cString: ZSTD_getErrorName(result))
                    return
                }
                compressed += output[0 ..< produced]
                if compressed.count >= spillBound { spillCompressed() }
                if end ? result == 0 : input.pos == input.size && produced < output.count { return }
            }
        }

        /// Moves the compressed bytes held in memory to the spill file.
        private func spillCompressed() {
            guard spills else { return }
            if spill == nil { spill = IndexSpill(folder: spillFolder) }
            guard let spill else {
                spills = false
                return
            }
            let taken = compressed.withUnsafeBytes { spill.append($0) }
            compressed.removeFirst(taken)
            if !compressed.isEmpty { spills = false }
        }

        /// The index's skippable frame: magic, size, `WEIRTARI`, the
        /// version and the counts, then the compressed stream (part of it,
        /// for a large index, in a spill file, read back as it is written out).
        ///
        /// - Throws: ``WeirError`` `.library` when libzstd failed or the
        ///   frame would pass what a skippable frame holds.
        package func frame(endedEarly: Bool, endOffset: Int, contentSize: Int, path: String)
            throws(WeirError) -> IndexFrame {
            flushBlock(end: true)
            if let failure {
                throw WeirError.library(path: path, operation: .writeMemberIndex, failure)
            }
            var head: [UInt8] = []
            head.appendUvarint(2)
            head.appendUvarint(endedEarly ? 1 : 0)
            head.appendUvarint(UInt64(count))
            head.appendUvarint(UInt64(endOffset))
            head.appendUvarint(UInt64(contentSize))
            let spilled = spill?.size ?? 0
            let content = MemberIndex.contentMagic.count + head.count + spilled + compressed.count
            guard content <= MemberIndex.maxFrameContent else {
                throw WeirError.library(path: path, operation: .writeMemberIndex,
                                        "the member index is too large for a skippable frame: \(content) bytes")
            }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(8 + content - spilled)
            bytes.append(littleEndian: MemberIndex.skippableMagic)
            bytes.append(littleEndian: UInt32(content))
            bytes += MemberIndex.contentMagic
            bytes += head
            defer { compressed = [] }
            guard let spill, spilled > 0 else { return IndexFrame(head: bytes + compressed, spill: nil, tail: []) }
            return IndexFrame(head: bytes, spill: spill, tail: compressed)
        }
    }
}
