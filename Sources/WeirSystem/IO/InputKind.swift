import CSupport
import Glibc

/// What an input or output descriptor is, which decides the water marks and
/// whether a size is known.
///
/// A regular file counts as one only when its `st_size` can be trusted:
/// the size decides how much is mapped and read, so a size that is not the
/// content's loses data. procfs reports 0 for files with content, sysfs
/// 4096 for files of a few bytes, and FUSE file systems what their daemon
/// says; such files, and any regular file of size 0, are read as a
/// ``stream``, to their end, as `read()` in a loop would (issue 37).
package enum InputKind: Equatable, Sendable {
    /// A regular file of this size in bytes.
    case regularFile(size: Int)
    /// A pipe, FIFO, socket, terminal or device, or a file whose size is
    /// not to be trusted: no size is known.
    case stream

    /// Looks at `descriptor` with `fstat`, and `fstatfs` for a regular file.
    package static func of(_ descriptor: Descriptor) -> InputKind {
        guard let status = try? descriptor.status(),
              let size = trustedSize(of: descriptor, status: status), size > 0 else {
            return .stream
        }
        return .regularFile(size: size)
    }

    /// The size, when it is a regular file.
    package var size: Int? {
        if case .regularFile(let size) = self { return size }
        return nil
    }

    /// Whether `descriptor` is on a file system whose file sizes are not
    /// their contents' (`statfs(2)` magic numbers from linux/magic.h).
    package static func sizeIsUntrusted(_ descriptor: Descriptor) -> Bool {
        descriptor.source == nil && untrustedFileSystems.contains(weir_fs_magic(descriptor.fd))
    }

    /// Whether the file at `path` is on such a file system (`statfs`).
    package static func sizeIsUntrusted(path: String) -> Bool {
        untrustedFileSystems.contains(FileName.withCString(path) { weir_fs_magic_path($0) })
    }

    /// The size of `descriptor`, the regular file `status` describes, when it can
    /// be trusted: nil on such a file system; a size of 0 only when one
    /// `pread` of a byte finds the file empty indeed.
    package static func trustedSize(of descriptor: Descriptor, status: FileStatus) -> Int? {
        guard status.isRegularFile, !sizeIsUntrusted(descriptor) else { return nil }
        if status.size > 0 { return status.size }
        var byte: UInt8 = 0
        return Descriptor.retrying { pread(descriptor.fd, &byte, 1, 0) } == 0 ? 0 : nil
    }

    /// procfs, sysfs, debugfs, tracefs, securityfs, configfs, cgroup v1 and
    /// v2, efivarfs, pstore, FUSE.
    private static let untrustedFileSystems: Set<UInt> = {
        var magics: Set<UInt> = [
            0x9FA0, 0x6265_6572, 0x6462_6720, 0x7472_6163, 0x7363_6673, 0x6265_6570,
            0x0027_E0EB, 0x6367_7270, 0xDE5E_81E4, 0x6165_676C, fuseMagic,
        ]
        if trustsFuseSizesForTesting { magics.remove(fuseMagic) }
        return magics
    }()

    /// The fault suite's way to map, resume and index files on its FUSE file
    /// system, whose sizes are its folder's: set only by the executable's
    /// test build, from WEIR_TEST_TRUST_FUSE_SIZES=1, at its start, before
    /// any thread of the run exists and before the set above is first read
    /// (so unguarded).
    package nonisolated(unsafe) static var trustsFuseSizesForTesting = false

    /// FUSE's `statfs` magic number.
    private static let fuseMagic: UInt = 0x6573_5546
}
