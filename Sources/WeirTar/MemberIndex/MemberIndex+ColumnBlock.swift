import Glibc

extension MemberIndex {
    /// Members coded into version 2's columns (docs/members.md, "Version
    /// 2"), each against the one before it: the block a ``ColumnWriter``
    /// fills, and a chunk's share of a file's walk (``TarSegment``), which
    /// the stitcher joins into the writer's block (``ColumnWriter/join(_:)``).
    ///
    /// Why a chunk's walk codes its members itself: packed as rows,
    /// unpacked by the stitcher and appended again one by one, a member
    /// cost a file's run about 1,200 instructions more than a pipe's, where
    /// the walk appends to the writer directly (issue 82). A member is
    /// coded against the one before it in six columns only (the gap, the
    /// mtime, the path's two, the owners), and the state a member leaves
    /// behind (its end, path, folders, mtime, owners) is its own, whatever
    /// came before it: so a chunk's members from its second on are coded
    /// as one walk of the whole content codes them. A join codes the
    /// chunk's first member again, against the block's last (it reads the
    /// first member back from the chunk's columns, where it was coded
    /// against nothing: its own values), then copies the columns.
    ///
    /// Storage: each column a raw buffer of its own, behind a pointer, as
    /// the coding state: a member's appends pay no dynamic exclusivity
    /// check on a class's fields, no uniqueness check, no allocation but a
    /// buffer's doubling.
    ///
    /// Threads: one at a time (a chunk's worker, then the stitcher).
    package final class ColumnBlock: TarMemberSink, @unchecked Sendable {  // one thread at a time (above)
        /// The columns, then (a chunk's block only) each member's raw bytes (``rawBytes(path:)``),
        /// which a join reads to find where the writer's block fills.
        let columns: UnsafeMutablePointer<ColumnBytes>
        let state: UnsafeMutablePointer<State>
        /// Whether each member's raw bytes are kept (a chunk's block: ``columns``' last).
        let keepsRaws: Bool
        static let columnCount = Column.allCases.count

        /// What changes with every member.
        struct State {
            /// Raw bytes of the members in the block, how many they are, and how many ever came.
            var raw = 0
            var count = 0
            var total = 0
            /// The previous member's end, path, mtime and names, which the
            /// next is coded against; the names in raw buffers of their own
            /// (as the columns, for the same reason), freed in `deinit`.
            var previousEnd = 0
            var previousPath = ColumnBytes(capacity: 256)
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

        /// A writer's block: every buffer at the size a block of `blockBytes`
        /// may take, made at once (``ColumnWriter/init(level:spillBound:blockBytes:spillFolder:blocksCapacity:)``
        /// says why); untouched capacity costs no memory.
        package convenience init(blockBytes: Int) {
            self.init(members: blockBytes / 24 + 1, pathBytes: blockBytes + 4096, keepsRaws: false)
        }

        /// A chunk's block: small buffers, grown (doubled) as members come;
        /// each member's raw bytes kept for the join.
        package convenience init() {
            self.init(members: 128, pathBytes: 4096, keepsRaws: true)
        }

        private init(members: Int, pathBytes: Int, keepsRaws: Bool) {
            self.keepsRaws = keepsRaws
            let columns = UnsafeMutablePointer<ColumnBytes>.allocate(capacity: Self.columnCount + 1)
            for column in Column.allCases {
                let capacity = switch column {
                case .pathRest: pathBytes
                case .size0, .size1, .size2, .type, .uname, .gname: members
                default: 3 * members
                }
                (columns + column.rawValue).initialize(to: ColumnBytes(capacity: capacity))
            }
            (columns + Self.columnCount).initialize(to: ColumnBytes(capacity: keepsRaws ? 2 * members : 0))
            self.columns = columns
            state = .allocate(capacity: 1)
            state.initialize(to: State())
        }

        deinit {
            for index in 0 ... Self.columnCount { columns[index].deallocate() }
            columns.deinitialize(count: Self.columnCount + 1).deallocate()
            state.pointee.previousPath.deallocate()
            state.pointee.previousUname.deallocate()
            state.pointee.previousGname.deallocate()
            state.deinitialize(count: 1).deallocate()
        }

        /// Members in the block, raw bytes they hold, members it ever held.
        package var count: Int { state.pointee.count }
        package var raw: Int { state.pointee.raw }
        package var total: Int { state.pointee.total }

        /// What a member adds to a block's raw bytes: a block closes past ``MemberIndex/blockBytes``.
        @inline(__always)
        static func rawBytes(path: Int) -> Int { path + 24 }

        /// Column `index`'s bytes.
        func bytes(column index: Int) -> UnsafeRawBufferPointer { columns[index].bytes }

        /// The block's members handed on (to the compressor, or a file): its
        /// columns emptied, the coding state kept (a member is coded
        /// against the one before it across blocks too).
        func endBlock() {
            (state.pointee.raw, state.pointee.count) = (0, 0)
        }

        func removeAll(column index: Int) { columns[index].removeAll() }
        func removeFirst(_ length: Int, column index: Int) { columns[index].removeFirst(length) }

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
            appendNames(uname: member.uname, gname: member.gname)
            if member.type == UInt8(ascii: "3") || member.type == UInt8(ascii: "4") {
                put(.device, UInt64(max(0, member.devmajor)))
                put(.device, UInt64(max(0, member.devminor)))
            }
            state.pointee.previousEnd = member.end
            state.pointee.previousMtime = member.mtime
            let raw = Self.rawBytes(path: member.path.count)
            if keepsRaws { columns[Self.columnCount].appendUvarint(UInt64(raw)) }
            state.pointee.count += 1
            state.pointee.total += 1
            state.pointee.raw += raw
        }

        /// The owners, each against the previous member's.
        @inline(__always)
        func appendNames(uname: UnsafeRawBufferPointer, gname: UnsafeRawBufferPointer) {
            let state = state
            let known = state.pointee.hasPreviousNames
            Self.appendName(uname, known: known, after: &state.pointee.previousUname,
                            length: &state.pointee.previousUnameLength, to: &columns[Column.uname.rawValue])
            Self.appendName(gname, known: known, after: &state.pointee.previousGname,
                            length: &state.pointee.previousGnameLength, to: &columns[Column.gname.rawValue])
            state.pointee.hasPreviousNames = true
        }

        /// A name up to its first NUL (the index keeps no NUL in a name).
        @inline(__always)
        static func untilNUL(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
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
        func appendPath(_ name: UnsafeRawBufferPointer) {
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
    }
}
