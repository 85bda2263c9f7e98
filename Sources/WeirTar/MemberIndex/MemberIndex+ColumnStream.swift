import CZstd
import WeirFormats
import WeirSystem

extension MemberIndex {
    /// The one zstd frame `source` must be, exactly, with its checksum;
    /// never more than it could hold.
    static func decompressedStream(_ source: UnsafeRawBufferPointer, corrupt: (String) -> WeirError)
        throws(WeirError) -> [UInt8] {
        try checkStream(source, corrupt: corrupt)
        guard let context = ZSTD_createDCtx() else { throw corrupt("out of memory") }
        defer { ZSTD_freeDCtx(context) }
        let limit = source.count * maxExpansion
        // Decoded straight into the content's room, made for what such a list usually decodes to (its columns
        // shrink about fivefold) and grown (copied) only past it; its pages made a step ahead of the decoder.
        var capacity = min(limit + 1, max(source.count * 6, 1 << 16))
        var content: [UInt8] = []
        var input = ZSTD_inBuffer(src: source.baseAddress, size: source.count, pos: 0)
        var failure: String?
        var finished = false
        while !finished {
            let previous = content
            content = [UInt8](unsafeUninitializedCapacity: capacity) { room, filled in
                guard let base = room.baseAddress else { return }
                previous.withUnsafeBufferPointer { old in
                    if let from = old.baseAddress { base.update(from: from, count: old.count) }
                }
                filled = previous.count
                while filled < room.count {
                    let step = min(room.count - filled, 256 << 10)
                    Page.populate(UnsafeMutableRawPointer(base + filled), step)
                    var output = ZSTD_outBuffer(dst: base + filled, size: step, pos: 0)
                    let result = ZSTD_decompressStream(context, &output, &input)
                    filled += output.pos
                    if ZSTD_isError(result) != 0 {
                        failure = "the record list does not decode: " + String(cString: ZSTD_getErrorName(result))
                        return
                    }
                    if result == 0 {
                        finished = true
                        return
                    }
                    if input.pos == input.size, output.pos < output.size {
                        failure = "the record list's zstd frame is cut short"
                        return
                    }
                }
            }
            if let failure { throw corrupt(failure) }
            guard content.count <= limit else { throw corrupt("the record list decodes to more than it can hold") }
            if !finished { capacity = min(limit + 1, capacity * 2) }
        }
        return content
    }

    /// Checks that `source` is one zstd frame, exactly, with its checksum:
    /// what is refused before anything of it is decoded.
    static func checkStream(_ source: UnsafeRawBufferPointer, corrupt: (String) -> WeirError) throws(WeirError) {
        guard let header = FrameHeader(startOf: source) else { throw corrupt("the record list is not a zstd frame") }
        guard header.hasChecksum else { throw corrupt("the record list's zstd frame lacks its checksum") }
        let length = ZSTD_findFrameCompressedSize(source.baseAddress, source.count)
        guard ZSTD_isError(length) == 0, length == source.count else {
            throw corrupt(ZSTD_isError(length) != 0 ? "the record list's zstd frame is cut short"
                                                    : "\(source.count - length) bytes follow the record list")
        }
    }

    /// Version 2's blocks of columns decoded on a thread of their own while
    /// the first walk reads them (`weir -d --member`): the walk of a block
    /// starts once the block is decoded, not once the whole list is, so the
    /// two go on side by side on two cores.
    ///
    /// What the walk finds is what it would find on the list decoded first,
    /// and so are its errors: every check against the list's size asks for
    /// the bytes it needs (``bytes(atLeast:)``), and a walk that fails waits
    /// for the decoding to end and throws, as decoding first would have, its
    /// failure first, then a member count the list cannot hold
    /// (``settled(_:)``), then its own. The walk's body meets members before
    /// the stream's checksum is verified: it must keep them to itself until
    /// the walk returns (a selection does).
    ///
    /// Memory: the decoded list, in rooms grown as the eager decoder's (a
    /// guess from the compressed size, doubled when outgrown); a room
    /// outgrown is kept, not freed, since a walk's names may point into it.
    ///
    /// Sendable by hand: the rooms are appended to by the decoding thread
    /// with the lock held and read with it held; the bytes a walk reads are
    /// those published (below `filled`), which are never written again.
    final class ColumnStream: @unchecked Sendable {
        private struct Progress: Sendable {
            /// Bytes of the list decoded, in the last room.
            var filled = 0
            var finished = false
            /// Why decoding failed, as the eager decoder says it.
            var failure: String?
        }

        private let progress = ConditionLock(Progress())
        /// The rooms decoded into, the last the current one, which holds
        /// the list from its start (each grown one a copy of the last).
        private var rooms: [UnsafeMutableRawBufferPointer] = []
        /// The members the list's header declares.
        let declared: UInt64
        /// The file and the index frame's offset, for the messages.
        private let path: String
        private let offset: Int

        /// Starts decoding `frame[stream...]`, the zstd frame of a version 2
        /// list that declares `declared` members, checked first as the eager
        /// decoder checks it (``checkStream(_:corrupt:)``).
        ///
        /// - Throws: ``WeirError`` `.corrupt` for a stream that is not one
        ///   zstd frame with its checksum.
        init(frame: [UInt8], stream: Int, declared: UInt64, path: String, offset: Int) throws(WeirError) {
            (self.declared, self.path, self.offset) = (declared, path, offset)
            try frame[stream...].withUnsafeBytes { source in Result { () throws(WeirError) in
                try MemberIndex.checkStream(source) { .corruptMemberIndex(path: path, offset: offset, $0) }
            } }.get()
            DedicatedThread.start(name: "weir-index") { [self] in
                let failure = frame[stream...].withUnsafeBytes { decode($0) }
                progress.withLock(broadcast: true) { state in
                    state.finished = true
                    state.failure = failure
                }
            }
        }

        deinit { for room in rooms { room.deallocate() } }

        /// The list decoded so far, from its start: at least `count` bytes
        /// when the list holds that many, else all of it (waits for them).
        ///
        /// - Throws: ``WeirError`` `.corrupt` when decoding failed before
        ///   `count` bytes were decoded.
        func bytes(atLeast count: Int) throws(WeirError) -> UnsafeRawBufferPointer {
            let (base, filled, failure) = progress.withLock(when: { $0.finished || $0.filled >= count }) { state in
                (UnsafeRawPointer(rooms.last?.baseAddress), state.filled, state.failure)
            }
            if let failure { throw WeirError.corruptMemberIndex(path: path, offset: offset, failure) }
            return UnsafeRawBufferPointer(start: base, count: filled)
        }

        /// The error that a walk failing with `error` throws, once decoding
        /// ended: decoding's failure, or a member count the list cannot
        /// hold, else `error`.
        func settled(_ error: WeirError) -> WeirError {
            let state = progress.withLock(when: { $0.finished }) { $0 }
            if let failure = state.failure { return .corruptMemberIndex(path: path, offset: offset, failure) }
            guard declared <= UInt64(state.filled / MemberIndex.leastMemberBytes) else {
                return .corruptMemberIndex(path: path, offset: offset,
                                           "it declares \(declared) members, more than its \(state.filled) bytes "
                                               + "can hold")
            }
            return error
        }

        /// Decodes `source` into the rooms, publishing each step; the
        /// failure as ``decompressedStream(_:corrupt:)`` words it, or nil.
        private func decode(_ source: UnsafeRawBufferPointer) -> String? {
            guard let context = ZSTD_createDCtx() else { return "out of memory" }
            defer { ZSTD_freeDCtx(context) }
            let limit = source.count * MemberIndex.maxExpansion
            var capacity = min(limit + 1, max(source.count * 6, 1 << 16))
            var room = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 64)
            progress.withLock { _ in rooms.append(room) }
            var filled = 0
            var input = ZSTD_inBuffer(src: source.baseAddress, size: source.count, pos: 0)
            while true {
                if filled == room.count {
                    guard filled <= limit else { return "the record list decodes to more than it can hold" }
                    capacity = min(limit + 1, capacity * 2)
                    let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 64)
                    grown.copyMemory(from: UnsafeRawBufferPointer(rebasing: room[..<filled]))
                    room = grown
                    progress.withLock { _ in rooms.append(grown) }
                }
                guard let base = room.baseAddress else { return "out of memory" }
                let step = min(room.count - filled, 256 << 10)
                Page.populate(base + filled, step)
                var output = ZSTD_outBuffer(dst: base + filled, size: step, pos: 0)
                let result = ZSTD_decompressStream(context, &output, &input)
                filled += output.pos
                if ZSTD_isError(result) != 0 {
                    return "the record list does not decode: " + String(cString: ZSTD_getErrorName(result))
                }
                if result == 0 {
                    guard filled <= limit else { return "the record list decodes to more than it can hold" }
                    progress.withLock { $0.filled = filled }
                    return nil
                }
                if input.pos == input.size, output.pos < output.size {
                    return "the record list's zstd frame is cut short"
                }
                progress.withLock(broadcast: true) { $0.filled = filled }
            }
        }
    }
}
