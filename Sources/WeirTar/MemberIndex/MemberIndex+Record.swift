import Glibc

extension MemberIndex {
    /// One member as a walk of the record list hands it
    /// (``Records/forEachRecord(_:)``): its fields, and its names as bytes
    /// that the walk owns — the path in the walk's own buffer, rewritten for
    /// the next member; the link target and the owner names in the decoded
    /// columns. None of it is valid after the call it is handed to: a body
    /// that keeps a member keeps ``member()``.
    ///
    /// Why not a ``Member``: a walk hands every member of an archive to a
    /// body that keeps almost none (a listing, a selection, a mount's tree),
    /// and a value of four arrays costs a copy of the changed bytes and
    /// reference counting at every member, most of what the walk costs.
    package struct Record {
        package var headerOffset: Int
        package var headerLength: Int
        package var dataLength: Int
        package var size: Int
        package var mtime: Int64
        package var mode: UInt32
        package var uid: Int
        package var gid: Int
        package var type: UInt8
        package var devmajor: Int
        package var devminor: Int
        /// The full name, in tar's bytes.
        package var path: UnsafeRawBufferPointer
        /// A link's target, else empty.
        package var link: UnsafeRawBufferPointer
        package var uname: UnsafeRawBufferPointer
        package var gname: UnsafeRawBufferPointer
        /// How many of the path's first bytes are the previous record's (its
        /// folders that the next path keeps, each with its '/'): what a
        /// body that splits paths need not split again. 0 when not known.
        package var sharedPrefix: Int

        /// A record of nothing yet: the "previous member" before the first,
        /// which ends at 0 with empty names.
        init() {
            (headerOffset, headerLength, dataLength, size, mtime, mode) = (0, 0, 0, 0, 0, 0)
            (uid, gid, type, devmajor, devminor, sharedPrefix) = (0, 0, 0, 0, 0, 0)
            let empty = UnsafeRawBufferPointer(start: nil, count: 0)
            (path, link, uname, gname) = (empty, empty, empty, empty)
        }

        /// Where the member's data begins: just past its header blocks.
        package var dataOffset: Int { headerOffset + headerLength }
        /// Where the member's bytes (headers, data, padding) end.
        package var end: Int { dataOffset + dataLength }

        /// The member as a value of its own, its names copied.
        package func member() -> Member {
            Member(headerOffset: headerOffset, headerLength: headerLength, dataLength: dataLength, size: size,
                   mtime: mtime, mode: mode, uid: uid, gid: gid, type: type, path: Array(path), link: Array(link),
                   uname: Array(uname), gname: Array(gname), devmajor: devmajor, devminor: devminor)
        }

        /// Calls `body` with the record of `member`, whose names it points into.
        package static func with<Value, Failure: Error>(_ member: Member,
                                                        _ body: (Record) throws(Failure) -> Value)
            throws(Failure) -> Value {
            try member.path.withUnsafeBytes { path in
                member.link.withUnsafeBytes { link in
                    member.uname.withUnsafeBytes { uname in
                        member.gname.withUnsafeBytes { gname in
                            Result { () throws(Failure) in
                                var record = Record()
                                (record.headerOffset, record.headerLength) = (member.headerOffset, member.headerLength)
                                (record.dataLength, record.size, record.mtime) = (member.dataLength, member.size,
                                                                                  member.mtime)
                                (record.mode, record.uid, record.gid, record.type) = (member.mode, member.uid,
                                                                                      member.gid, member.type)
                                (record.devmajor, record.devminor) = (member.devmajor, member.devminor)
                                (record.path, record.link, record.uname, record.gname) = (path, link, uname, gname)
                                return try body(record)
                            }
                        }
                    }
                }
            }.get()
        }
    }
}

extension MemberIndex.Member {
    /// Becomes the member `record` describes; a name equal to the one it
    /// replaces (an owner, a group, most link targets: none) is not
    /// written, so its storage stays shared with the copies kept of it.
    mutating func update(from record: MemberIndex.Record) {
        (headerOffset, headerLength, dataLength, size, mtime) = (record.headerOffset, record.headerLength,
                                                                 record.dataLength, record.size, record.mtime)
        (mode, uid, gid, type, devmajor, devminor) = (record.mode, record.uid, record.gid, record.type,
                                                      record.devmajor, record.devminor)
        Self.replace(&path, with: record.path)
        Self.replace(&link, with: record.link)
        Self.replace(&uname, with: record.uname)
        Self.replace(&gname, with: record.gname)
    }

    private static func replace(_ name: inout [UInt8], with bytes: UnsafeRawBufferPointer) {
        let same = name.count == bytes.count && name.withUnsafeBytes { old in
            guard let left = old.baseAddress, let right = bytes.baseAddress else { return true }
            return memcmp(left, right, bytes.count) == 0
        }
        if !same { name = Array(bytes) }
    }
}
