import CFuse
import CLibraries
import Glibc
import WeirRemote
import WeirSystem

/// A ``MountedArchive`` served on the kernel's FUSE through libfuse 3's
/// low-level API: read-only (`-o ro`, so the kernel itself refuses every
/// write with EROFS), and the kernel's page cache kept between opens, as the
/// archive's content cannot change while it is mounted (a change fails the
/// reads instead).
///
/// The inode numbers the kernel asks by are the tree's node numbers plus
/// one (the root, node 0, is FUSE's inode 1; a hard link's names share
/// their node's): every request finds its node without a table, so the
/// mount keeps nothing per name the kernel looked up, and its memory does
/// not grow with the names visited. The kernel's forgets need no answer
/// but their acknowledgement.
package enum FuseMount {
    /// How long the kernel may keep names, attributes and names found
    /// missing: the archive's tree does not change while it is mounted.
    private static let timeout = 86400.0

    /// Mounts `archive` on `mountPoint` (absolute: libfuse unmounts by the
    /// name it was given, and a daemon's folder is `/`), calls `ready` once the mount is in
    /// place, then serves the kernel's requests on up to `threads` threads
    /// until it is unmounted (`fusermount3 -u`) or SIGINT, SIGTERM or
    /// SIGHUP come (then it unmounts).
    ///
    /// - Parameter options: FUSE's `-o` options the user gave, passed on
    ///   (the mount's own: `allow_other`, `default_permissions`, …).
    /// - Throws: `WeirError` when libfuse cannot be loaded, or refuses the
    ///   options or the mount (libfuse has said why on standard error).
    /// - Parameter mayMount: asked just before mounting; false (or a stop
    ///   signal pending) cancels: nothing is mounted, and `run` returns false.
    @discardableResult
    package static func run(_ archive: MountedArchive, on mountPoint: String, options: [String], threads: Int,
                            mayMount: () -> Bool = { true }, ready: () -> Void) throws(WeirError) -> Bool {
        // libfuse is loaded at its first use (CLibraries): one that cannot be is this error, not an exit.
        if let why = weir_library_load(WEIR_LIBRARY_FUSE) {
            throw WeirError.library(path: archive.name, operation: .open, String(cString: why))
        }
        var operations = fuse_lowlevel_ops()
        operations.`init` = { data, connection in
            guard let data, let connection else { return }
            // Files open without a request each (and without a release): the first read checks instead.
            if connection.pointee.capable & UInt32(FUSE_CAP_NO_OPEN_SUPPORT) != 0 {
                Unmanaged<MountedArchive>.fromOpaque(data).takeUnretainedValue().opensUnasked.withLock { $0 = true }
            }
        }
        operations.lookup = { request, parent, name in
            guard let archive = FuseMount.mounted(request), let name,
                  let folder = FuseMount.node(parent, in: archive) else {
                fuse_reply_err(request, ENOENT)
                return
            }
            archive.namesLookedUp.withLock { $0 += 1 }
            var entry = fuse_entry_param()
            // A name missing is kept by the kernel as missing (inode 0) as long as a name found.
            entry.entry_timeout = FuseMount.timeout
            entry.attr_timeout = FuseMount.timeout
            let tree = archive.tree
            if let child = tree.child(of: folder, named: UnsafeRawBufferPointer(start: name, count: strlen(name))) {
                // What the answer shows whole (a device or FIFO the kernel opens itself, an empty file, a
                // folder's or a link's kind): its record is checked here.
                if FuseMount.checkedAtLookup(tree.nodes[child]),
                   !FuseMount.passes(request, child, in: archive) { return }
                entry.ino = fuse_ino_t(child + 1)
                entry.attr = FuseMount.stat(of: tree.nodes[child], number: child)
                if tree.nodes[child].kind != .folder { archive.fileTouched(lookedUp: true) }
            } else if tree.nodes[folder].kind != .folder {
                fuse_reply_err(request, ENOTDIR)
                return
            }
            fuse_reply_entry(request, &entry)
        }
        operations.forget = { request, _, _ in fuse_reply_none(request) }
        operations.forget_multi = { request, _, _ in fuse_reply_none(request) }
        operations.getattr = { request, inode, _ in
            guard let archive = FuseMount.mounted(request), let node = FuseMount.node(inode, in: archive) else {
                fuse_reply_err(request, ENOENT)
                return
            }
            var status = FuseMount.stat(of: archive.tree.nodes[node], number: node)
            fuse_reply_attr(request, &status, FuseMount.timeout)
        }
        operations.readlink = { request, inode in
            guard let archive = FuseMount.mounted(request), let node = FuseMount.node(inode, in: archive) else {
                fuse_reply_err(request, ENOENT)
                return
            }
            guard archive.tree.nodes[node].kind == .symbolicLink else {
                fuse_reply_err(request, EINVAL)
                return
            }
            guard FuseMount.passes(request, node, in: archive) else { return }
            var link = archive.tree.link(of: node)
            // A target holding a NUL is cut there, as a C string is.
            link.append(0)
            link.withUnsafeBufferPointer { link in
                link.withMemoryRebound(to: CChar.self) { _ = fuse_reply_readlink(request, $0.baseAddress) }
            }
        }
        // A folder's record is checked at its lookup, and here for one listed without one (the root, a
        // folder reached by its number); what it lists are the other members', each checked when served.
        operations.opendir = { request, inode, info in
            guard let archive = FuseMount.mounted(request), let info,
                  let node = FuseMount.node(inode, in: archive) else {
                fuse_reply_err(request, ENOENT)
                return
            }
            guard FuseMount.passes(request, node, in: archive) else { return }
            fuse_reply_open(request, info)
        }
        operations.readdir = { request, inode, size, offset, _ in
            FuseMount.list(request, inode, size: size, from: offset, plus: false)
        }
        // Listings with each name's attributes, where the kernel asks for them (its adaptive READDIRPLUS:
        // the first part of a folder's listing, and the rest once names of the folder were looked up)
        // while the reader wants files' attributes (MountedArchive.listingGivesAttributes): `tar c` or
        // `ls -l` of a folder then looks up no name, one request for a folder's names rather than one
        // for each name.
        operations.readdirplus = { request, inode, size, offset, _ in
            FuseMount.list(request, inode, size: size, from: offset, plus: true)
        }
        operations.open = { request, inode, info in
            guard let archive = FuseMount.mounted(request), let info,
                  let node = FuseMount.node(inode, in: archive) else {
                fuse_reply_err(request, ENOENT)
                return
            }
            guard info.pointee.flags & O_ACCMODE == O_RDONLY else {
                fuse_reply_err(request, EROFS)
                return
            }
            // The kernel then opens every file without asking (its page cache kept, as keep_cache).
            if archive.opensUnasked.current {
                fuse_reply_err(request, ENOSYS)
                return
            }
            let refused = archive.open(node)
            guard refused == 0 else {
                fuse_reply_err(request, refused)
                return
            }
            info.pointee.keep_cache = 1
            fuse_reply_open(request, info)
        }
        operations.read = { request, inode, size, offset, _ in
            guard let archive = FuseMount.mounted(request), let node = FuseMount.node(inode, in: archive) else {
                fuse_reply_err(request, ENOENT)
                return
            }
            // The bytes go out as the cache holds them (libfuse writes them to the kernel at once).
            let refused = archive.read(node, at: Int(offset), count: size) { bytes in
                _ = fuse_reply_buf(request, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
            }
            if refused != 0 { fuse_reply_err(request, refused) }
        }
        operations.statfs = { request, _ in
            guard let archive = FuseMount.mounted(request) else {
                fuse_reply_err(request, EIO)
                return
            }
            var status = statvfs()
            status.f_bsize = 4096
            status.f_frsize = 4096
            status.f_blocks = fsblkcnt_t((archive.cache.reader.count + 4095) / 4096)
            status.f_files = fsfilcnt_t(archive.tree.nodes.count)
            status.f_namemax = 255
            status.f_flag = UInt(ST_RDONLY)
            fuse_reply_statfs(request, &status)
        }
        // `ro` last: a user's `-o rw` would otherwise make the mount writable (its writes then ENOSYS, not the
        // EROFS the kernel gives on a read-only mount).
        let mountOptions = (["default_permissions", "subtype=weir", "fsname=" + fsname(archive.name)] + options
            + ["ro"]).joined(separator: ",")
        let arguments = ["weir", "-o", mountOptions]
        var pointers = arguments.map { strdup($0) }
        defer { pointers.forEach { free($0) } }
        let session: OpaquePointer? = pointers.withUnsafeMutableBufferPointer { argv in
            var list = fuse_args(argc: Int32(argv.count), argv: argv.baseAddress, allocated: 0)
            defer { fuse_opt_free_args(&list) }
            return weir_fuse_session_new(&list, &operations, Unmanaged.passUnretained(archive).toOpaque())
        }
        guard let session else {
            throw WeirError.library(path: archive.name, operation: .open, "FUSE refused the options \(mountOptions)")
        }
        defer { fuse_session_destroy(session) }
        // A stop signal taken while the archive was opened (a tar without an index is decoded first) cancels
        // the mount rather than making one only to unmount it.
        guard mayMount(), !stopSignalPending() else { return false }
        guard FileName.withCString(mountPoint, { fuse_session_mount(session, $0) }) == 0 else {
            throw WeirError.library(path: mountPoint, operation: .open, "FUSE could not mount it")
        }
        // The file system this mount made, by its device: unmounted at the end only if the mount point still
        // shows it. Unmounted already (`fusermount3 -u`), with another file system mounted there since, that
        // one is not this mount's to unmount.
        let made = device(at: mountPoint)
        defer {
            if let made, device(at: mountPoint) == made { fuse_session_unmount(session) }
        }
        _ = fuse_set_signal_handlers(session)
        defer { fuse_remove_signal_handlers(session) }
        setStopHandler(for: session)
        defer { setStopHandler(for: nil) }
        ready()
        // Only this thread takes the stop signals: libfuse's handler ends the
        // loop by waking this thread's wait, which a signal taken by another
        // thread (a read-ahead's) would not.
        setStopSignals(blocked: false)
        _ = weir_fuse_session_loop(session, UInt32(clamping: max(1, threads)))
        withExtendedLifetime(archive) {}
        return true
    }

    /// The session a stop signal ends: set by ``setStopHandler(for:)``
    /// before the handler is, read only by the handler.
    nonisolated(unsafe) private static var stopping: OpaquePointer?

    /// SIGINT, SIGTERM and SIGHUP end `session`'s loop, as libfuse's own
    /// handler does, and abandon every HTTP transfer under way (a URL's
    /// frame waited for on a stalled server would hold its thread, and the
    /// loop's end, until the stall timeout: 30 s); nil: their default again.
    private static func setStopHandler(for session: OpaquePointer?) {
        var action = sigaction()
        sigemptyset(&action.sa_mask)
        if let session {
            stopping = session
            action.__sigaction_handler.sa_handler = { _ in
                if let session = FuseMount.stopping { fuse_session_exit(session) }
                HTTPClient.abandonAll()
            }
        } else {
            // Blocked first on this thread, the one that takes them: a second signal while unmounting must
            // not end the process before it has unmounted.
            setStopSignals(blocked: true)
            action.__sigaction_handler.sa_handler = SIG_DFL
            stopping = nil
        }
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaction(signal, &action, nil) }
    }

    /// Ends the process by SIGINT, SIGTERM or SIGHUP if one is pending
    /// (blocked), as it would have ended had the signal not been blocked;
    /// returns when none is.
    package static func endByPendingStopSignal() {
        var pending = sigset_t()
        sigpending(&pending)
        for number in [SIGINT, SIGTERM, SIGHUP] where sigismember(&pending, number) == 1 {
            signal(number, SIG_DFL)
            var only = sigset_t()
            sigemptyset(&only)
            sigaddset(&only, number)
            // Delivered to this thread as it is unblocked.
            pthread_sigmask(SIG_UNBLOCK, &only, nil)
        }
    }

    /// Whether SIGINT, SIGTERM or SIGHUP is pending for this thread or the
    /// process (blocked, as a mount blocks them until it serves).
    package static func stopSignalPending() -> Bool {
        var pending = sigset_t()
        sigpending(&pending)
        return [SIGINT, SIGTERM, SIGHUP].contains { sigismember(&pending, $0) == 1 }
    }

    /// The device of the file system at `path`, as the kernel knows it
    /// without asking the file system (no request to a FUSE mount whose
    /// daemon serves none); nil when it cannot be told.
    private static func device(at path: String) -> UInt64? {
        var device: UInt64 = 0
        return FileName.withCString(path, { weir_mount_device($0, &device) }) == 0 ? device : nil
    }

    /// Blocks (or unblocks) SIGINT, SIGTERM and SIGHUP in the calling
    /// thread; the threads it starts later inherit the mask. A mount blocks
    /// them before anything starts a thread, and ``run(_:on:options:threads:ready:)``
    /// unblocks them in its own thread only.
    package static func setStopSignals(blocked: Bool) {
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&signals, signal) }
        pthread_sigmask(blocked ? SIG_BLOCK : SIG_UNBLOCK, &signals, nil)
    }

    /// Writes `text` to the system log, as one line (the background mount's
    /// messages: its standard error is gone).
    package static func systemLog(_ text: String) {
        text.withCString { weir_syslog($0) }
    }

    /// Answers a listing of folder `inode` from `offset` in at most `size`
    /// bytes; with `plus`, each name with its attributes (as a lookup of it
    /// answers).
    ///
    /// Offsets: 1 after ".", 2 after "..", 3 + n after entry n: a large
    /// folder is listed in pieces, each from the last offset the kernel
    /// took, rather than whole at each call.
    private static func list(_ request: fuse_req_t?, _ inode: fuse_ino_t, size: Int, from offset: off_t, plus: Bool) {
        guard let archive = FuseMount.mounted(request), let node = FuseMount.node(inode, in: archive) else {
            fuse_reply_err(request, ENOENT)
            return
        }
        let tree = archive.tree
        guard tree.nodes[node].kind == .folder else {
            fuse_reply_err(request, ENOTDIR)
            return
        }
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(size, 1))
        defer { buffer.deallocate() }
        var used = 0
        // Without attributes (inode 0 in a READDIRPLUS answer: the kernel makes nothing of the name) unless
        // the reader wants the files': a walk that only lists would have an inode made for every name.
        let attributes = plus && archive.listingGivesAttributes()
        func add(_ name: UnsafePointer<CChar>, _ number: Int, _ next: Int) -> Bool {
            let needed: Int
            if plus {
                var entry = fuse_entry_param()
                // A node checked at lookup and not checked yet: the kernel looks it up (the lookup checks it).
                if attributes, !checkedAtLookup(tree.nodes[number]) || archive.isChecked(number) {
                    entry.ino = fuse_ino_t(number + 1)
                    entry.attr = FuseMount.stat(of: tree.nodes[number], number: number)
                    entry.entry_timeout = FuseMount.timeout
                    entry.attr_timeout = FuseMount.timeout
                } else {
                    entry.attr.st_ino = ino_t(number + 1)
                    entry.attr.st_mode = tree.nodes[number].typeBits
                }
                needed = fuse_add_direntry_plus(request, buffer + used, size - used, name, &entry, off_t(next))
            } else {
                var status = Glibc.stat()
                status.st_ino = ino_t(number + 1)
                status.st_mode = tree.nodes[number].typeBits
                needed = fuse_add_direntry(request, buffer + used, size - used, name, &status, off_t(next))
            }
            guard needed <= size - used else { return false }
            used += needed
            return true
        }
        if offset < 1, !add(".", node, 1) { return send(request, buffer, used) }
        // The parent is not kept: ".." gives the folder's own number, as the kernel does not use it.
        if offset < 2, !add("..", node, 2) { return send(request, buffer, used) }
        let entries = tree.entries(of: node)
        // By name, as the tree keeps them: the same order at every mount.
        for entry in min(entries.upperBound, entries.lowerBound + max(0, Int(offset) - 2)) ..< entries.upperBound {
            let next = 3 + entry - entries.lowerBound
            let added = tree.withName(of: entry) { name in
                withUnsafeTemporaryAllocation(of: CChar.self, capacity: name.count + 1) { text in
                    for (at, byte) in name.enumerated() { text[at] = CChar(bitPattern: byte) }
                    text[name.count] = 0
                    return add(UnsafePointer(text.baseAddress ?? buffer), Int(tree.entries[entry].node), next)
                }
            }
            // The buffer is full: the kernel asks again from the last offset it took.
            if !added { break }
        }
        send(request, buffer, used)
    }

    /// Whether `node` is checked at its lookup: every node but a file with
    /// bytes to read, which is checked at its open or first read. What a
    /// lookup answers shows the rest whole: a device or a FIFO the kernel
    /// opens without a request; an empty file it never reads (when opens
    /// are not asked, nothing else would check a record that calls a file
    /// of 2 bytes an empty one); a folder's or a link's kind in `stat`.
    private static func checkedAtLookup(_ node: MountNode) -> Bool {
        node.kind != .file || node.size == 0
    }

    /// Whether `node`'s record passes its check (``MountedArchive/checkNear(_:)``);
    /// when it does not, `request` is answered with the error.
    private static func passes(_ request: fuse_req_t?, _ node: Int, in archive: MountedArchive) -> Bool {
        let refused = archive.checkNear(node)
        if refused != 0 { fuse_reply_err(request, refused) }
        return refused == 0
    }

    /// The archive of the mount `request` is for.
    private static func mounted(_ request: fuse_req_t?) -> MountedArchive? {
        guard let data = fuse_req_userdata(request) else { return nil }
        return Unmanaged<MountedArchive>.fromOpaque(data).takeUnretainedValue()
    }

    /// The node of inode number `inode`; nil for a number the tree does not have.
    private static func node(_ inode: fuse_ino_t, in archive: MountedArchive) -> Int? {
        guard inode >= 1, inode <= fuse_ino_t(archive.tree.nodes.count) else { return nil }
        return Int(inode) - 1
    }

    /// Answers a listing with the first `count` bytes of `buffer`.
    private static func send(_ request: fuse_req_t?, _ buffer: UnsafeMutablePointer<CChar>, _ count: Int) {
        fuse_reply_buf(request, buffer, count)
    }

    /// The archive's name as `mount` lists the file system: its last part,
    /// without the characters an option list would split at.
    private static func fsname(_ name: String) -> String {
        let base = name.split(separator: "/").last.map(String.init) ?? name
        return String(base.unicodeScalars.filter { $0 != "," && $0 != "\\" && $0 != "=" }.map(Character.init))
    }

    /// `stat` of `node`, whose inode number is its index plus one.
    static func stat(of node: MountNode, number: Int) -> Glibc.stat {
        var status = Glibc.stat()
        status.st_ino = ino_t(number + 1)
        status.st_mode = node.typeBits | node.mode
        status.st_nlink = nlink_t(max(1, node.links))
        status.st_uid = uid_t(clamping: node.uid)
        status.st_gid = gid_t(clamping: node.gid)
        status.st_size = off_t(node.size)
        status.st_blksize = 4096
        // A sparse member stores less than its size (its holes), as `du` of tar x's file shows.
        status.st_blocks = blkcnt_t((min(node.size, node.kind == .file ? node.dataLength : node.size) + 511) / 512)
        let time = timespec(tv_sec: Int(node.mtime), tv_nsec: 0)
        (status.st_mtim, status.st_atim, status.st_ctim) = (time, time, time)
        if node.kind == .characterDevice || node.kind == .blockDevice {
            let (major, minor) = (UInt64(node.device.major), UInt64(node.device.minor))
            status.st_rdev = dev_t((major & 0xfff) << 8 | (minor & 0xff) | (minor & ~0xff) << 12
                | (major & ~0xfff) << 32)
        }
        return status
    }
}
