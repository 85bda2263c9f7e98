import Glibc

/// An open file descriptor and the system calls weir makes on it outside
/// DispatchIO: the one `fstat`, an exact `pread`, reads and writes that
/// retry EINTR. Errors are ``WeirError``s naming `path` and the operation.
/// It does not own the descriptor: whoever opened it closes it.
struct Descriptor: Sendable {
    let fd: Int32
    /// How errors name the file.
    let path: String

    init(_ fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    /// `fstat`.
    func status(operation: WeirError.Operation = .stat) throws(WeirError) -> FileStatus {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw WeirError.system(errno, path: path, operation: operation) }
        return FileStatus(info)
    }

    /// Fills `buffer` from `offset` with `pread`, retrying short reads and
    /// EINTR; returns the bytes read, fewer than asked only at the end of the file.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int, operation: WeirError.Operation) throws(WeirError) -> Int {
        var done = 0
        while done < buffer.count {
            let got = Self.retrying { pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done)) }
            if got < 0 { throw WeirError.system(errno, path: path, operation: operation) }
            if got == 0 { break }
            done += got
        }
        return done
    }

    /// `count` bytes from `offset` (fewer only at the end of the file).
    func read(count: Int, at offset: Int, operation: WeirError.Operation) throws(WeirError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = try bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(WeirError) in try read(into: buffer, at: offset, operation: operation) }
        }.get()
        bytes.removeLast(count - got)
        return bytes
    }

    /// One `read` into `buffer`, retrying EINTR: the bytes read, 0 at the
    /// end, or -1 with `errno` set (EAGAIN on a non-blocking descriptor).
    func readSome(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        Self.retrying { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// One `write` of `buffer`, retrying EINTR: the bytes written, or -1
    /// with `errno` set (EAGAIN on a non-blocking descriptor).
    func writeSome(_ buffer: UnsafeRawBufferPointer) -> Int {
        Self.retrying { Glibc.write(fd, buffer.baseAddress, buffer.count) }
    }

    /// Runs `call` again while it fails with EINTR.
    static func retrying(_ call: () -> Int) -> Int {
        while true {
            let result = call()
            if result < 0 && errno == EINTR { continue }
            return result
        }
    }
}
