import WeirSystem

extension MemberIndex {
    /// An index's decoded record list, checked whole when made, walked
    /// member by member without keeping a value per member.
    ///
    /// A listing prints one line per member and keeps none: making every
    /// record an array of ``Member`` values (and each name its own array)
    /// is most of what a listing would cost. ``forEach(_:)`` hands each
    /// record in turn as one ``Member`` that the walk updates in place —
    /// a name front-coded against the previous one rewrites only the bytes
    /// that differ — so a walk allocates nothing per member unless the
    /// body keeps the value (``members()`` does).
    package struct Records: Sendable {
        /// The record list, header included.
        private let bytes: [UInt8]
        /// Where the first member's record begins in `bytes`.
        private let start: Int
        /// The file and the index frame's offset, for the messages.
        private let path: String
        private let offset: Int
        /// `bytes` are version 2's blocks of columns, walked as they stand
        /// (``MemberIndex/walkColumns(_:declared:endOffset:corrupt:_:)``), not rows.
        private let columnar: Bool
        /// Version 2's blocks still being decoded, which a walk reads as they
        /// come (``ColumnStream``): then `bytes` is empty.
        private let stream: ColumnStream?
        /// How many members the list holds.
        package let count: Int
        /// Flags bit 0: the tar stream ended early.
        package let endedEarly: Bool
        /// Where the tar's end blocks begin in the content (or where it ended early).
        package let endOffset: Int
        /// The decoded size of the whole content the index describes.
        package let contentSize: Int

        /// The version 1 record list `bytes`, its header checked, and with `checking`
        /// every record too, read whole once: every walk after it reads
        /// exactly what this one read, so cannot fail. Without `checking`,
        /// the first walk is the check, and throws what this would have.
        ///
        /// - Throws: ``WeirError`` `.corrupt` for another version, a varint
        ///   that runs past the end, offsets that overflow or pass the end
        ///   offset, a mode out of range, bytes after the last record.
        init(_ bytes: [UInt8], checking: Bool, path: String, offset: Int) throws(WeirError) {
            let header = try bytes.withUnsafeBufferPointer { buffer in
                Result { () throws(WeirError)
                    -> (start: Int, count: Int, flags: UInt64, end: Int, size: Int) in
                    var reader = RecordReader(bytes: buffer, path: path, offset: offset)
                    let version = try reader.uvarint()
                    // Rows are version 1's only: version 2's columns are walked as they stand.
                    guard version == 1 else {
                        throw reader.corrupt("version \(version) of the record list is not one this weir reads "
                                                 + "(1 or 2)")
                    }
                    let flags = try reader.uvarint()
                    let count = try reader.uvarint()
                    let endOffset = try reader.offset()
                    let contentSize = try reader.offset()
                    guard endOffset <= contentSize else {
                        throw reader.corrupt("the end offset \(endOffset) passes the content size \(contentSize)")
                    }
                    // A record takes at least 15 bytes: a count larger than the bytes
                    // left is a lie, refused before anything is sized by it.
                    guard count <= UInt64(bytes.count - reader.position) / 15 else {
                        throw reader.corrupt("it declares \(count) members, more than its \(bytes.count) bytes "
                                                 + "can hold")
                    }
                    return (reader.position, Int(count), flags, endOffset, contentSize)
                }
            }.get()
            (self.bytes, start, self.path, self.offset) = (bytes, header.start, path, offset)
            (columnar, stream) = (false, nil)
            (count, endedEarly, endOffset, contentSize) = (header.count, header.flags & 1 != 0, header.end, header.size)
            // The check reads every field but copies no name: their lengths are enough to check them.
            if checking { try walk(names: false) { _ in } }
        }

        /// Version 2's blocks of columns `raw` and its header's counts, walked
        /// in place: no row is made of them. With `checking`, walked whole
        /// once as the rows' init does; without, the first walk is the check.
        ///
        /// - Throws: as the rows' init, and what a column that lies makes.
        init(columns raw: [UInt8], flags: UInt64, count: UInt64, endOffset: Int, contentSize: Int, checking: Bool,
             path: String, offset: Int) throws(WeirError) {
            (bytes, start, self.path, self.offset) = (raw, 0, path, offset)
            (columnar, stream) = (true, nil)
            // A member takes at least `leastMemberBytes` of its columns: a count above that is a lie, refused
            // before anything is sized by it.
            guard count <= UInt64(raw.count / MemberIndex.leastMemberBytes) else {
                throw WeirError.corruptMemberIndex(path: path, offset: offset,
                                                   "it declares \(count) members, more than its \(raw.count) bytes "
                                                       + "can hold")
            }
            (self.count, endedEarly, self.endOffset, self.contentSize) = (Int(count), flags & 1 != 0, endOffset,
                                                                          contentSize)
            if checking { try walk(names: false) { _ in } }
        }

        /// Version 2's blocks as `stream` decodes them, unchecked: the first
        /// walk checks them, the member count among the rest
        /// (``ColumnStream/settled(_:)``), and throws what the check of the
        /// whole would have. Nothing may be sized by ``count`` before it.
        init(stream: ColumnStream, flags: UInt64, endOffset: Int, contentSize: Int, path: String, offset: Int) {
            (bytes, start, self.path, self.offset) = ([], 0, path, offset)
            (columnar, self.stream) = (true, stream)
            (count, endedEarly, self.endOffset, self.contentSize) = (Int(clamping: stream.declared), flags & 1 != 0,
                                                                     endOffset, contentSize)
        }

        /// Calls `body` with each member's record, in archive order. The
        /// value handed to `body` is reused for the next member: `body` keeps
        /// a copy if it needs one (which then costs its own storage).
        ///
        /// - Throws: what `body` throws; a ``WeirError`` `.corrupt` only from
        ///   the walk that checks the list when it is made.
        package func forEach(_ body: (Member) throws(WeirError) -> Void) throws(WeirError) {
            if columnar {
                // Version 2's records are made into one member, updated in place (only the path's new part is
                // written): what the walk of rows hands.
                var member = Member(headerOffset: 0, headerLength: 0, dataLength: 0, size: 0, path: [])
                try forEachRecord { record throws(WeirError) in
                    member.update(from: record)
                    try body(member)
                }
                return
            }
            try walkRows(names: true, body)
        }

        /// Calls `body` with each member, in archive order, as a ``Record``
        /// valid during the call only: nothing is copied or counted per
        /// member. The walk of a listing, a selection, a mount's tree.
        ///
        /// - Throws: as ``forEach(_:)``.
        package func forEachRecord(_ body: (Record) throws(WeirError) -> Void) throws(WeirError) {
            if let stream {
                let (path, offset) = (path, offset)
                do throws(WeirError) {
                    try MemberIndex.walkColumns(declared: stream.declared, endOffset: endOffset,
                                                corrupt: { .corruptMemberIndex(path: path, offset: offset, $0) },
                                                body) { count throws(WeirError) in try stream.bytes(atLeast: count) }
                } catch {
                    throw stream.settled(error)
                }
                return
            }
            if columnar {
                let (path, offset) = (path, offset)
                try bytes.withUnsafeBytes { raw in Result { () throws(WeirError) in
                    try MemberIndex.walkColumns(raw, declared: UInt64(count), endOffset: endOffset,
                                                corrupt: { .corruptMemberIndex(path: path, offset: offset, $0) }, body)
                } }.get()
                return
            }
            try walkRows(names: true) { member throws(WeirError) in try Record.with(member, body) }
        }

        /// Walks the records, checking them (the walk a record list made
        /// without `checking` leaves to its first walk).
        private func walk(names: Bool, _ body: (Member) throws(WeirError) -> Void) throws(WeirError) {
            if columnar {
                try forEachRecord { _ in }
            } else {
                try walkRows(names: names, body)
            }
        }

        /// Walks version 1's rows; without `names`, the members handed to
        /// `body` carry empty names and link targets.
        private func walkRows(names: Bool, _ body: (Member) throws(WeirError) -> Void) throws(WeirError) {
            try bytes.withUnsafeBufferPointer { buffer in
                Result { () throws(WeirError) in
                    var reader = RecordReader(bytes: buffer, path: path, offset: offset)
                    reader.position = start
                    // Before the first record, the "previous member" ends at 0 with empty names.
                    var member = Member(headerOffset: 0, headerLength: 0, dataLength: 0, size: 0, path: [])
                    for index in 0 ..< count {
                        try reader.next(&member, names: names, endOffset: endOffset, index: index)
                        try body(member)
                    }
                    guard reader.position == buffer.count else {
                        throw reader.corrupt("\(buffer.count - reader.position) bytes follow the last member's record")
                    }
                }
            }.get()
        }

        /// Every member's record, in archive order.
        package func members() throws(WeirError) -> [Member] {
            var members: [Member] = []
            // A list walked as it is decoded has its count checked by that walk only.
            if stream == nil { members.reserveCapacity(count) }
            try forEach { members.append($0) }
            return members
        }

        /// The whole index.
        package func index() throws(WeirError) -> MemberIndex {
            MemberIndex(members: try members(), endedEarly: endedEarly, endOffset: endOffset,
                        contentSize: contentSize)
        }
    }

    /// A cursor over a record list; every read past its end, every value
    /// too large for an `Int`, is refused.
    private struct RecordReader {
        /// The record list, held by the caller for as long as the reader is used.
        let bytes: UnsafeBufferPointer<UInt8>
        /// The file and the index frame's offset, for the messages.
        let path: String
        let frameOffset: Int
        var position = 0
        /// The lengths of the previous member's names, which the next ones are checked against.
        var pathLength = 0, unameLength = 0, gnameLength = 0

        init(bytes: UnsafeBufferPointer<UInt8>, path: String, offset: Int) {
            (self.bytes, self.path, frameOffset) = (bytes, path, offset)
        }

        @inline(never)
        func corrupt(_ detail: String) -> WeirError { .corruptMemberIndex(path: path, offset: frameOffset, detail) }

        @inline(__always)
        mutating func uvarint() throws(WeirError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while position < bytes.count {
                let byte = bytes[position]
                guard shift < 63 || shift == 63 && byte <= 1 else { throw tooLarge() }
                position += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            throw runsPastEnd()
        }

        // The errors are made out of line: the walk's loop stays small.
        @inline(never)
        func tooLarge() -> WeirError { corrupt("a varint at byte \(position) is larger than 64 bits") }

        @inline(never)
        func runsPastEnd() -> WeirError {
            corrupt("a varint runs past the end of the record list at byte \(position)")
        }

        /// A uvarint that fits an `Int` (an offset, a length, a size).
        @inline(__always)
        mutating func offset() throws(WeirError) -> Int {
            let value = try uvarint()
            guard value <= UInt64(Int.max) else { throw corrupt("a value at byte \(position) is out of range") }
            return Int(value)
        }

        mutating func byte() throws(WeirError) -> UInt8 {
            guard position < bytes.count else { throw corrupt("a record runs past the end of the record list") }
            position += 1
            return bytes[position - 1]
        }

        /// Where the next string's bytes lie in the record list.
        @inline(__always)
        mutating func string() throws(WeirError) -> Range<Int> {
            let length = try offset()
            guard length <= bytes.count - position else {
                throw corrupt("a string of \(length) bytes runs past the end of the record list")
            }
            position += length
            return position - length ..< position
        }

        /// Replaces `name`, the previous member's, by the front-coded name
        /// that comes next (without `copying`, leaves it); one equal to the
        /// previous (an owner, a group) is not written at all, so its storage
        /// stays shared. Returns the new name's length; `previous` is the
        /// previous name's.
        @inline(__always)
        mutating func frontCoded(_ name: inout [UInt8], previous: Int, copying: Bool) throws(WeirError) -> Int {
            let shared = try offset()
            guard shared <= previous else {
                throw corrupt("a name shares \(shared) bytes with a previous one of \(previous)")
            }
            let rest = try string()
            guard copying, !(rest.isEmpty && shared == name.count) else { return shared + rest.count }
            name.removeLast(name.count - shared)
            name.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[rest]))
            return name.count
        }

        /// Replaces `member`, the previous member's record, by the next
        /// one's (without `names`, leaving its names and link as they are);
        /// `index` and the offsets for the messages.
        mutating func next(_ member: inout Member, names: Bool, endOffset: Int, index: Int) throws(WeirError) {
            let (gap, headerLength, dataLength) = (try offset(), try offset(), try offset())
            let (start, o1) = member.end.addingReportingOverflow(gap)
            let (dataStart, o2) = start.addingReportingOverflow(headerLength)
            let (end, o3) = dataStart.addingReportingOverflow(dataLength)
            guard !(o1 || o2 || o3), end <= endOffset else {
                throw corrupt("member \(index) runs past the end offset \(endOffset)")
            }
            guard headerLength >= 512, headerLength % 512 == 0 else {
                throw corrupt("member \(index)'s headers are \(headerLength) bytes, not whole 512-byte blocks")
            }
            let size = try offset()
            let zigzag = try uvarint()
            let mode = try uvarint()
            guard mode <= 0o7777 else { throw corrupt("member \(index)'s mode \(mode) is out of range") }
            let (uid, gid, type) = (try offset(), try offset(), try byte())
            (member.headerOffset, member.headerLength, member.dataLength) = (start, headerLength, dataLength)
            (member.size, member.mode, member.uid, member.gid, member.type) = (size, UInt32(mode), uid, gid, type)
            member.mtime = Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
            pathLength = try frontCoded(&member.path, previous: pathLength, copying: names)
            let link = try string()
            if names, !(link.isEmpty && member.link.isEmpty) {
                member.link = Array(UnsafeBufferPointer(rebasing: bytes[link]))
            }
            unameLength = try frontCoded(&member.uname, previous: unameLength, copying: names)
            gnameLength = try frontCoded(&member.gname, previous: gnameLength, copying: names)
        }
    }
}
