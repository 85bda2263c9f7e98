import CFuzzSupport
import Glibc

/// An anonymous in-memory file (memfd): a regular file to the code under
/// test (``Weir/InputKind/regularFile(size:)``, mappable, `pread`-able),
/// without a disk or a name to clean up. Closed when released.
public final class MemoryFile {
    /// The descriptor, positioned at offset 0.
    public let fd: Int32

    /// A file holding `bytes`.
    public init(_ bytes: UnsafeRawBufferPointer) {
        fd = weir_fuzz_memfd()
        require(fd >= 0, "memfd_create failed: errno \(errno)")
        var done = 0
        while done < bytes.count {
            let wrote = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(done))
            require(wrote > 0, "pwrite to a memfd failed: errno \(errno)")
            done += wrote
        }
    }

    /// An empty file.
    public convenience init() {
        self.init(UnsafeRawBufferPointer(start: nil, count: 0))
    }

    deinit { close(fd) }

    /// A name that opens the same file (for APIs that take a path).
    public var path: String { "/proc/self/fd/\(fd)" }

    /// Everything the file holds now.
    public var contents: [UInt8] {
        var info = stat()
        require(fstat(fd, &info) == 0, "fstat of a memfd failed")
        let size = Int(info.st_size)
        var bytes = [UInt8](repeating: 0, count: size)
        var done = 0
        bytes.withUnsafeMutableBytes { buffer in
            while done < size {
                let got = pread(fd, buffer.baseAddress! + done, size - done, off_t(done))
                require(got > 0, "pread of a memfd failed: errno \(errno)")
                done += got
            }
        }
        return bytes
    }
}
