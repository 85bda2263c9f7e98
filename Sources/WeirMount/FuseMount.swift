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
        operations.`init` = { _, config in
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
            let entry = archive.tree.nodes[node]
            guard entry.kind == .symbolicLink else { return -EINVAL }
            guard size > 0 else { return 0 }
            let count = min(entry.link.count, size - 1)
            entry.link.withUnsafeBytes { link in
                UnsafeMutableRawBufferPointer(start: buffer, count: count).copyMemory(
                    from: UnsafeRawBufferPointer(rebasing: link[0 ..< count]))
            }
            buffer[count] = 0
            return 0
        }
        operations.readdir = { path, buffer, fill, _, _, _ in
            guard let archive = FuseMount.current(), let fill, let node = FuseMount.lookup(archive, path) else {
                return -ENOENT
            }
            let folder = archive.tree.nodes[node]
            guard folder.kind == .folder else { return -ENOTDIR }
            _ = fill(buffer, ".", nil, 0, fuse_fill_dir_flags(rawValue: 0))
            _ = fill(buffer, "..", nil, 0, fuse_fill_dir_flags(rawValue: 0))
            for (name, child) in folder.children {
                var status = Glibc.stat()
                status.st_ino = ino_t(child + 1)
                status.st_mode = archive.tree.nodes[child].typeBits
                let full = name.withUnsafeBufferPointer { bytes in
                    withUnsafeTemporaryAllocation(of: CChar.self, capacity: bytes.count + 1) { text in
                        for (at, byte) in bytes.enumerated() { text[at] = CChar(bitPattern: byte) }
                        text[bytes.count] = 0
                        return fill(buffer, text.baseAddress, &status, 0, fuse_fill_dir_flags(rawValue: 0))
                    }
                }
                if full != 0 { return -ENOMEM }
            }
            return 0
        }
        operations.open = { path, info in
            guard let archive = FuseMount.current(), let info, let node = FuseMount.lookup(archive, path) else {
                return -ENOENT
            }
            guard info.pointee.flags & O_ACCMODE == O_RDONLY else { return -EROFS }
            let refused = archive.open(node, shownAs: FuseMount.shown(path))
            guard refused == 0 else { return -refused }
            info.pointee.fh = UInt64(node)
            info.pointee.keep_cache = 1
            return 0
        }
        operations.read = { path, buffer, size, offset, info in
            guard let archive = FuseMount.current(), let buffer else { return -EIO }
            guard let node = info.map({ Int($0.pointee.fh) }) ?? FuseMount.lookup(archive, path) else {
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
