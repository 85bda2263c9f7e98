import Glibc

extension MemberIndex {
    /// One column's raw bytes while a ``ColumnWriter`` fills its block: a
    /// buffer of its own, appended to in place, grown by doubling (never,
    /// at the capacity the writer gives it). A value with raw storage, not
    /// an array in an array of a class: an array's append there paid a
    /// dynamic exclusivity check and a uniqueness check per field (issue 82).
    /// The names a ``TarWalk`` and a writer keep from one member to the
    /// next are held in one too, for the same reason. Its owner frees it
    /// (``deallocate()``).
    struct ColumnBytes {
        private(set) var base: UnsafeMutablePointer<UInt8>
        private(set) var count = 0
        private var capacity: Int

        init(capacity: Int) {
            self.capacity = max(64, capacity)
            base = .allocate(capacity: self.capacity)
        }

        func deallocate() { base.deallocate() }

        /// The bytes so far.
        var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

        @inline(__always)
        private mutating func reserve(_ more: Int) {
            if _slowPath(count + more > capacity) { grow(to: count + more) }
        }

        @inline(never)
        private mutating func grow(to needed: Int) {
            var size = capacity * 2
            while size < needed { size *= 2 }
            let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
            larger.update(from: base, count: count)
            base.deallocate()
            (base, capacity) = (larger, size)
        }

        @inline(__always)
        mutating func append(_ byte: UInt8) {
            reserve(1)
            base[count] = byte
            count += 1
        }

        /// `value` as an unsigned LEB128 varint (``Swift/Array/appendUvarint(_:)``'s bytes).
        @inline(__always)
        mutating func appendUvarint(_ value: UInt64) {
            reserve(10)
            var value = value
            while value >= 0x80 {
                base[count] = UInt8(truncatingIfNeeded: value) | 0x80
                count += 1
                value >>= 7
            }
            base[count] = UInt8(value)
            count += 1
        }

        @inline(__always)
        mutating func append(_ bytes: UnsafeRawBufferPointer) {
            guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
            reserve(bytes.count)
            UnsafeMutableRawPointer(base + count).copyMemory(from: source, byteCount: bytes.count)
            count += bytes.count
        }

        mutating func removeAll() { count = 0 }

        /// Keeps the first `length` bytes (at most ``count``).
        mutating func keep(_ length: Int) {
            precondition(length >= 0 && length <= count, "keeps bytes it holds")
            count = length
        }

        /// Holds `bytes` instead of what it held.
        @inline(__always)
        mutating func set(_ bytes: UnsafeRawBufferPointer) {
            count = 0
            append(bytes)
        }

        mutating func removeFirst(_ length: Int) {
            memmove(base, base + length, count - length)
            count -= length
        }
    }
}
