import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// An output file that appears under its name only once it is complete.
///
/// The bytes go to a hidden temporary file in the destination folder
/// (`.NAME.weir-XXXXXX`, created by `mkstemp` with mode 0600, so no other
/// user can read a partial file). ``commit(copying:)`` gives it the input's
/// permission bits and modification time and renames it over `path`;
/// ``discard()`` removes it. A failure, a signal or a crash therefore never
/// leaves a partial file under the real name.
public final class OutputFile: @unchecked Sendable {
    /// The name the file gets when committed.
    public let path: String
    /// The temporary file being written.
    public let temporaryPath: String
    /// The descriptor open for writing on the temporary file.
    public let descriptor: Int32
    private let force: Bool
    private var open = true

    /// Temporary files not yet committed or discarded, so that a signal
    /// handler can remove them before the process ends.
    static let pending = Locked<Set<String>>([])

    /// Creates the temporary file for `path`.
    ///
    /// - Parameters:
    ///   - path: the file to create once the output is complete.
    ///   - force: when false, an existing `path` is an error, checked
    ///     now and again at commit.
    /// - Throws: ``WeirError`` `.outputExists`, or the `mkstemp` failure
    ///   (folder missing or not writable, disk full).
    public init(path: String, force: Bool) throws(WeirError) {
        self.path = path
        self.force = force
        if !force, FileStatus.exists(path) {
            throw WeirError(.outputExists, path: path, operation: "create",
                            reason: "already exists; use -f to overwrite it")
        }
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        let template = (folder.isEmpty ? "." : folder) + "/." + url.lastPathComponent + ".weir-XXXXXX"
        var bytes = Array(template.utf8CString)
        let fd = bytes.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw WeirError.system(errno, path: path, operation: "create")
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        descriptor = fd
        temporaryPath = String(decoding: bytes.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        Self.pending.withLock { _ = $0.insert(temporaryPath) }
    }

    /// Gives the file `source`'s permission bits and modification time (when
    /// given), closes it and renames it to `path`.
    ///
    /// - Throws: ``WeirError`` when the output appeared meanwhile (without
    ///   force), or `close`/`rename` fail (a delayed write error such as a
    ///   full disk shows up at `close`); the temporary file is then removed.
    public func commit(copying source: FileStatus?) throws(WeirError) {
        precondition(open, "OutputFile committed twice")
        if let source {
            _ = fchmod(descriptor, source.mode & 0o7777)
            var times = [timespec(tv_sec: source.accessTime.tv_sec, tv_nsec: source.accessTime.tv_nsec),
                         timespec(tv_sec: source.modificationTime.tv_sec, tv_nsec: source.modificationTime.tv_nsec)]
            _ = futimens(descriptor, &times)
        } else {
            let mask = umask(0)
            umask(mask)
            _ = fchmod(descriptor, 0o666 & ~mask)
        }
        open = false
        if Glibc.close(descriptor) != 0 {
            let code = errno
            unlink(temporaryPath)
            Self.pending.withLock { _ = $0.remove(temporaryPath) }
            throw WeirError.system(code, path: path, operation: "write")
        }
        if !force, FileStatus.exists(path) {
            unlink(temporaryPath)
            Self.pending.withLock { _ = $0.remove(temporaryPath) }
            throw WeirError(.outputExists, path: path, operation: "create",
                            reason: "already exists; use -f to overwrite it")
        }
        if rename(temporaryPath, path) != 0 {
            let code = errno
            unlink(temporaryPath)
            Self.pending.withLock { _ = $0.remove(temporaryPath) }
            throw WeirError.system(code, path: path, operation: "rename")
        }
        Self.pending.withLock { _ = $0.remove(temporaryPath) }
    }

    /// Closes and removes the temporary file; `path` is left as it was.
    public func discard() {
        guard open else { return }
        open = false
        Glibc.close(descriptor)
        unlink(temporaryPath)
        Self.pending.withLock { _ = $0.remove(temporaryPath) }
    }

    /// Removes every pending temporary file; for a signal handler about to
    /// end the process.
    public static func removeAllPending() {
        for path in pending.current { unlink(path) }
    }

    deinit { discard() }
}
