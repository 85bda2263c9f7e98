import CFuse
import Glibc
import WeirSystem

/// A ``MountedArchive`` served on the kernel's FUSE through libfuse 3's
/// high-level API: read-only (`-o ro`, so the kernel itself refuses every
/// write with EROFS), inode numbers of the archive's tree (a hard link's
/// names share one), and the kernel's page cache kept between opens, as the
/// archive's content cannot change while it is mounted (a change fails the
/// reads instead).
package enum FuseMount {
    /// Mounts `archive` on `mountPoint`, calls `ready` once the mount is in
    /// place, then serves the kernel's requests on up to `threads` threads
    /// until it is unmounted (`fusermount3 -u`) or SIGINT, SIGTERM or
    /// SIGHUP come (then it unmounts).
    ///
    /// - Parameter options: FUSE's `-o` options the user gave, passed on.
    /// - Throws: `WeirError` when libfuse refuses the options or the mount
    ///   (libfuse has said why on standard error).
    package static func run(_ archive: MountedArchive, on mountPoint: String, options: [String], threads: Int,
                            ready: () -> Void) throws(WeirError) {
        var operations = fuse_operations()
        operations.`init` = { connection, config in
            // Files open without a request each (and without a release): the first read checks instead.
            if let connection, connection.pointee.capable & UInt32(FUSE_CAP_NO_OPEN_SUPPORT) != 0 {
                FuseMount.current()?.opensUnasked.withLock { $0 = true }
            }
            // No READDIRPLUS: libfuse keeps a node for every name a listing hands the kernel with its
            // attributes, so that a `find` over the archive would cost one per member; the kernel looks
            // up the names it needs instead (a lookup each), and no open (above).
            connection?.pointee.want &= ~UInt32(FUSE_CAP_READDIRPLUS)
            if let config {
                config.pointee.use_ino = 1
                config.pointee.kernel_cache = 1
                config.pointee.entry_timeout = 86400
                config.pointee.attr_timeout = 86400
                config.pointee.negative_timeout = 86400
            }
            return fuse_get_context()?.pointee.private_data
        }
        operations.getattr = { path, status, _ in
            guard let archive = FuseMount.current(), let status, let node = FuseMount.lookup(archive, path) else {
                return -ENOENT
            }
            status.pointee = FuseMount.stat(of: archive.tree.nodes[node], number: node)
            return 0
        }
        operations.readlink = { path, buffer, size in
            guard let archive = FuseMount.current(), let buffer, let node = FuseMount.lookup(archive, path) else {
                return -ENOENT
            }
            guard archive.tree.nodes[node].kind == .symbolicLink else { return -EINVAL }
            guard size > 0 else { return 0 }
            let link = archive.tree.link(of: node)
            let count = min(link.count, size - 1)
            link.withUnsafeBytes { link in
                UnsafeMutableRawBufferPointer(start: buffer, count: count).copyMemory(
                    from: UnsafeRawBufferPointer(rebasing: link[0 ..< count]))
            }
            buffer[count] = 0
            return 0
        }
        operations.readdir = { path, buffer, fill, offset, _, _ in
            guard let archive = FuseMount.current(), let fill, let node = FuseMount.lookup(archive, path) else {
                return -ENOENT
            }
            let tree = archive.tree
            guard tree.nodes[node].kind == .folder else { return -ENOTDIR }
            // Offsets: 1 after ".", 2 after "..", 3 + n after entry n: a large folder is listed in
            // pieces, each from the last offset the kernel took, rather than whole at each call.
            let none = fuse_fill_dir_flags(rawValue: 0)
            if offset < 1, fill(buffer, ".", nil, 1, none) != 0 { return 0 }
            if offset < 2, fill(buffer, "..", nil, 2, none) != 0 { return 0 }
            let entries = tree.entries(of: node)
            // By name, as the tree keeps them: the same order at every mount.
            for entry in min(entries.upperBound, entries.lowerBound + max(0, Int(offset) - 2)) ..< entries.upperBound {
                let child = Int(tree.entries[entry].node)
                var status = Glibc.stat()
                status.st_ino = ino_t(child + 1)
                status.st_mode = tree.nodes[child].typeBits
                let next = off_t(3 + entry - entries.lowerBound)
                let full = tree.withName(of: entry) { name in
                    withUnsafeTemporaryAllocation(of: CChar.self, capacity: name.count + 1) { text in
                        for (at, byte) in name.enumerated() { text[at] = CChar(bitPattern: byte) }
                        text[name.count] = 0
                        return fill(buffer, text.baseAddress, &status, next, none)
                    }
                }
                // The buffer is full: the kernel asks again from the last offset it took.
                if full != 0 { return 0 }
            }
            return 0
        }
        operations.open = { path, info in
            guard let archive = FuseMount.current(), let info, let node = FuseMount.lookup(archive, path) else {
                return -ENOENT
            }
            guard info.pointee.flags & O_ACCMODE == O_RDONLY else { return -EROFS }
            // The kernel then opens every file without asking (its page cache kept, as keep_cache).
            if archive.opensUnasked.current { return -ENOSYS }
            let refused = archive.open(node, shownAs: FuseMount.shown(path))
            guard refused == 0 else { return -refused }
            info.pointee.fh = UInt64(node)
            info.pointee.keep_cache = 1
            return 0
        }
        operations.read = { path, buffer, size, offset, info in
            guard let archive = FuseMount.current(), let buffer else { return -EIO }
            // No handle (0) when the kernel opened the file without asking: found by its path.
            guard let node = info.flatMap({ $0.pointee.fh == 0 ? nil : Int($0.pointee.fh) })
                ?? FuseMount.lookup(archive, path) else {
                return -ENOENT
            }
            let read = archive.read(node, shownAs: FuseMount.shown(path), at: Int(offset),
                                    into: UnsafeMutableRawBufferPointer(start: buffer, count: size))
            return Int32(clamping: read)
        }
        operations.statfs = { _, status in
            guard let archive = FuseMount.current(), let status else { return -EIO }
            status.pointee = statvfs()
            status.pointee.f_bsize = 4096
            status.pointee.f_frsize = 4096
            status.pointee.f_blocks = fsblkcnt_t((archive.cache.reader.count + 4095) / 4096)
            status.pointee.f_files = fsfilcnt_t(archive.tree.nodes.count)
            status.pointee.f_namemax = 255
            status.pointee.f_flag = UInt(ST_RDONLY)
            return 0
        }
        let mountOptions = (["ro", "default_permissions", "subtype=weir", "fsname=" + fsname(archive.name)] + options)
            .joined(separator: ",")
        let arguments = ["weir", "-o", mountOptions]
        var pointers = arguments.map { strdup($0) }
        defer { pointers.forEach { free($0) } }
        let fuse: OpaquePointer? = pointers.withUnsafeMutableBufferPointer { argv in
            var list = fuse_args(argc: Int32(argv.count), argv: argv.baseAddress, allocated: 0)
            defer { fuse_opt_free_args(&list) }
            return weir_fuse_new(&list, &operations, Unmanaged.passUnretained(archive).toOpaque())
        }
        guard let fuse else {
            throw WeirError.library(path: archive.name, operation: .open, "FUSE refused the options \(mountOptions)")
        }
        defer { fuse_destroy(fuse) }
        guard FileName.withCString(mountPoint, { fuse_mount(fuse, $0) }) == 0 else {
            throw WeirError.library(path: mountPoint, operation: .open, "FUSE could not mount it")
        }
        defer { fuse_unmount(fuse) }
        let session = fuse_get_session(fuse)
        _ = fuse_set_signal_handlers(session)
        defer { fuse_remove_signal_handlers(session) }
        ready()
        // Only this thread takes the stop signals: libfuse's handler ends the
        // loop by waking this thread's wait, which a signal taken by another
        // thread (a read-ahead's) would not.
        setStopSignals(blocked: false)
        _ = weir_fuse_loop(fuse, UInt32(clamping: max(1, threads)))
        withExtendedLifetime(archive) {}
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

    /// The archive of the mount whose request this thread serves.
    private static func current() -> MountedArchive? {
        guard let data = fuse_get_context()?.pointee.private_data else { return nil }
        return Unmanaged<MountedArchive>.fromOpaque(data).takeUnretainedValue()
    }

    private static func lookup(_ archive: MountedArchive, _ path: UnsafePointer<CChar>?) -> Int? {
        guard let path else { return nil }
        return archive.tree.lookup(UnsafeRawBufferPointer(start: path, count: strlen(path)))
    }

    /// The path of a request as messages show it.
    private static func shown(_ path: UnsafePointer<CChar>?) -> String {
        path.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self) } ?? "?"
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
        status.st_blocks = blkcnt_t((node.size + 511) / 512)
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
