import Dispatch
import Glibc
import WeirSystem

/// Whether a mounted archive is still the file it was when mounted: its
/// descriptor's identity (a file written in place changes its size or
/// time) and its name's in its folder (a file renamed over it is another
/// inode). The name is looked up in the folder as opened at mount, not
/// along its path: the path may lead into the mount itself (`weir mount
/// DIR/a.tar.zst DIR`), where a look-up would wait on the mount's own
/// threads, or fail. Once a
/// change is seen, it stays seen: every read after it fails, and the change
/// is told once.
///
/// A frame is decoded from the descriptor and then checked here before its
/// bytes are kept or handed on, and every open checks too: frames kept from
/// before a change are the old archive's whole, never bytes of two.
///
/// An archive read over HTTP (a descriptor on a remote source) has no
/// path nor status to watch: its source checks the object's identity on
/// every request and fails one to another version; ``remoteChanged(_:)``
/// is told of that failure, and from then on it is a change seen.
///
/// Safe to share across threads.
final class ArchiveWatch: Sendable {
    /// The archive as messages name it, and its absolute path.
    private let name: String
    private let path: String
    /// The archive's folder, open from before the mount (-1 when it could
    /// not be opened: its path is looked up then), and the archive's name in it.
    private let folder: Int32
    private let base: String
    /// A descriptor of the archive, open while mounted: its `fstat` is the
    /// file the mount reads, whatever the path holds now.
    private let file: Descriptor
    private let identity: ArchiveIdentity
    private let log: @Sendable (String) -> Void
    private let seen = Locked(false)
    /// When the archive was last found unchanged (`DispatchTime`'s
    /// uptime, in nanoseconds): ``changed(unlessCheckedWithin:)`` checks again only
    /// past that.
    private let lastUnchanged = Locked(UInt64(0))

    /// Watches `file`, open on `path`, as it is now.
    init(name: String, path: String, file: Descriptor, identity: ArchiveIdentity,
         log: @escaping @Sendable (String) -> Void) {
        (self.name, self.path, self.file, self.identity, self.log) = (name, path, file, identity, log)
        let slash = path.lastIndex(of: "/")
        base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let parent = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        // O_PATH (a folder that may be searched but not read), O_DIRECTORY, O_CLOEXEC.
        let flags = 0o10_000_000 | O_DIRECTORY | O_CLOEXEC
        folder = file.source != nil ? -1 : FileName.withCString(parent) { open($0, flags) }
    }

    deinit {
        file.close()
        if folder >= 0 { close(folder) }
    }

    /// Whether a change was seen already (no system call).
    var changeSeen: Bool { seen.current }

    /// Why reads fail now: the archive changed since it was mounted; nil
    /// while it is the same file. The first change seen is told.
    func changed() -> String? { changed(unlessCheckedWithin: 0) }

    /// ``changed()``, unless the archive was found unchanged less than
    /// `nanoseconds` ago (then nil, without a system call but the clock's):
    /// a file's first read checks at most once a millisecond, not a `stat`
    /// of the archive's path for each of the thousands of small files a
    /// `tar c` reads a second. A change is seen within that time; the
    /// check after each decoded frame is made every time.
    func changed(unlessCheckedWithin nanoseconds: UInt64) -> String? {
        if file.source != nil { return seen.current ? "it changed" : nil }
        if seen.current { return "it changed" }
        let start = DispatchTime.now().uptimeNanoseconds
        if nanoseconds > 0, start &- lastUnchanged.current < nanoseconds { return nil }
        let named = folder >= 0 ? FileStatus.of(name: base, inFolder: folder) : FileStatus.of(path: path)
        let change = identity.change(to: (try? file.status()).map(ArchiveIdentity.init))
            ?? identity.change(to: named.map(ArchiveIdentity.init))
        guard let change else {
            // The time before the check: a change made during it is seen by the next one.
            lastUnchanged.withLock { $0 = max($0, start) }
            return nil
        }
        let first = seen.withLock { seen in
            defer { seen = true }
            return !seen
        }
        if first { log("\(name): changed since it was mounted (\(change)): reads fail with EIO") }
        return change
    }

    /// A remote archive's source found another version of the object
    /// (`reason`, its error's words): a change seen, told once.
    func remoteChanged(_ reason: String) {
        let first = seen.withLock { seen in
            defer { seen = true }
            return !seen
        }
        if first { log("\(name): changed since it was mounted (\(reason)): reads fail with EIO") }
    }

    /// Throws when the archive changed (the check after each decoded frame).
    func check() throws(WeirError) {
        if changed() != nil { throw WeirError.changedWhileRead(path: name, operation: .read, shrank: false) }
    }
}
