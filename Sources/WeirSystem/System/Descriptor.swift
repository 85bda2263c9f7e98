import Glibc
import SystemPackage

/// An open file descriptor with the name its errors give, and the system
/// calls weir makes on it outside DispatchIO, through swift-system (which
/// retries EINTR): the open of an input, the one `fstat`, an exact `pread`,
/// a whole `pwrite`. Errors are ``WeirError``s naming `path` and the
/// operation, made in one place (``checked(_:_:)``).
///
/// The engine's one descriptor type: every descriptor inside it is one, so
/// the name travels with the number; `fd` is taken out only at a call into
/// C (DispatchIO, the CSupport shims, Glibc). The public API takes
/// swift-system's `FileDescriptor` and makes one of these once.
/// It does not own the descriptor: whoever opened it closes it.
///
/// One made on a ``PositionalSource`` (a remote object) has no number
/// (`fd` is -1): its ``status(operation:)`` is a regular file's of the
/// source's size, and its positional reads are the source's.
package struct Descriptor: Sendable, Equatable {
    /// The number, for a call into C; -1 for a descriptor on a ``source``.
    package let fd: Int32
    /// How errors name the file.
    package let path: String
    /// Where the positional reads go instead of `pread`, when it is not a file.
    package let source: (any PositionalSource)?

    package init(_ fd: Int32, path: String) {
        self.fd = fd
        self.path = path
        source = nil
    }

    /// A descriptor whose positional reads are `source`'s, named `path`.
    package init(source: any PositionalSource, path: String) {
        fd = -1
        self.path = path
        self.source = source
    }

    package static func == (left: Descriptor, right: Descriptor) -> Bool {
        left.fd == right.fd && left.path == right.path
            && left.source.map(ObjectIdentifier.init) == right.source.map(ObjectIdentifier.init)
    }

    /// Says that `ranges` of the file are about to be read (a remote
    /// source fetches them together); nothing for a file.
    package func prefetch(_ ranges: [Range<Int>]) throws(WeirError) {
        try source?.prefetch(ranges)
    }

    private var system: FileDescriptor { FileDescriptor(rawValue: fd) }

    /// Opens `path` for reading, close-on-exec; its name is passed as the
    /// bytes it is (``FileName``).
    package static func openForReading(
        _ path: String, operation: WeirError.Operation = .open
    ) throws(WeirError) -> Descriptor {
        if let opener = NamedInputs.opener(for: path) { return try opener(path) }
        return try open(path, .readOnly, operation: operation)
    }

    /// Opens an existing `path` in `mode`, close-on-exec, as ``openForReading(_:operation:)``.
    package static func open(_ path: String, _ mode: FileDescriptor.AccessMode,
                     operation: WeirError.Operation = .open) throws(WeirError) -> Descriptor {
        let opened = FileName.withCString(path) { name in
            Result { try FileDescriptor.open(name, mode, options: .closeOnExec) }
        }
        let fd = try Descriptor(-1, path: path).checked(operation) { try opened.get() }
        return Descriptor(fd.rawValue, path: path)
    }

    /// Closes the descriptor (for one ``open(_:_:operation:)`` opened).
    package func close() { if source == nil { try? system.close() } }

    /// `fstat`.
    package func status(operation: WeirError.Operation = .stat) throws(WeirError) -> FileStatus {
        if let source { return FileStatus(regularFileOfSize: source.size) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw WeirError.system(errno, path: path, operation: operation) }
        return FileStatus(info)
    }

    /// Fills `buffer` from `offset` with `pread`, retrying short reads;
    /// returns the bytes read, fewer than asked only at the end of the file.
    package func read(
        into buffer: UnsafeMutableRawBufferPointer, at offset: Int, operation: WeirError.Operation
    ) throws(WeirError) -> Int {
        if let source { return try source.read(into: buffer, at: offset) }
        var done = 0
        while done < buffer.count {
            let got = try checked(operation) {
                try system.read(fromAbsoluteOffset: Int64(offset + done),
                                into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]))
            }
            if got == 0 { break }
            done += got
        }
        return done
    }

    /// Writes all of `bytes` at `offset` with `pwrite`, again after a short
    /// write.
    package func write(
        _ bytes: UnsafeRawBufferPointer, at offset: Int, operation: WeirError.Operation = .write
    ) throws(WeirError) {
        _ = try checked(operation) { try system.writeAll(toAbsoluteOffset: Int64(offset), bytes) }
    }

    /// `count` bytes from `offset` (fewer only at the end of the file).
    package func read(count: Int, at offset: Int, operation: WeirError.Operation) throws(WeirError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = try bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(WeirError) in try read(into: buffer, at: offset, operation: operation) }
        }.get()
        bytes.removeLast(count - got)
        return bytes
    }

    /// One `read` from where the descriptor stands, into `buffer`: the bytes
    /// read, 0 at the end of the input.
    package func readSome(
        into buffer: UnsafeMutableRawBufferPointer, operation: WeirError.Operation = .read
    ) throws(WeirError) -> Int {
        try checked(operation) { try system.read(into: buffer) }
    }

    /// The bytes from where the descriptor stands to its end (a /proc file,
    /// whose size `stat` reports as 0), or its first `limit` bytes.
    package func readToEnd(limit: Int = .max, operation: WeirError.Operation = .read) throws(WeirError) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while bytes.count < limit {
            let wanted = min(buffer.count, limit - bytes.count)
            let got = try buffer.withUnsafeMutableBytes { chunk in
                Result { () throws(WeirError) in
                    try readSome(into: UnsafeMutableRawBufferPointer(rebasing: chunk[..<wanted]), operation: operation)
                }
            }.get()
            if got == 0 { break }
            bytes += buffer.prefix(got)
        }
        return bytes
    }

    /// Runs a swift-system call on this file: its `Errno` becomes a
    /// ``WeirError`` naming the file and `operation`.
    package func checked<Value>(_ operation: WeirError.Operation, _ call: () throws -> Value) throws(WeirError) -> Value
    {
        do {
            return try call()
        } catch let error as Errno {
            throw WeirError.system(error.rawValue, path: path, operation: operation)
        } catch {
            throw WeirError.library(path: path, operation: operation, "\(error)")
        }
    }

    /// Runs `call`, a system call swift-system does not wrap (`fdatasync`,
    /// `sync_file_range`, `recv`), again while it fails with EINTR.
    package static func retrying(_ call: () -> Int) -> Int {
        while true {
            let result = call()
            if result < 0 && errno == EINTR { continue }
            return result
        }
    }
}
