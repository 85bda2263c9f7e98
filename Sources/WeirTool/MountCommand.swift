import ArgumentParser
import CAllocator
import Glibc
import Weir
import WeirFiles
import WeirCLI
import WeirMount
import WeirRemote
import WeirSystem

/// `weir mount ARCHIVE MOUNTPOINT`: an archive shown as a read-only folder
/// on the kernel's FUSE (docs/mount.md). A first word of `mount` on the
/// command line picks it (WeirCommand.main); a file named `mount` is
/// compressed as `weir ./mount` or `weir -- mount`.
///
/// As sshfs and ratarmount do, it goes to the background once the mount is
/// in place: the process forks first, before anything starts a thread, and
/// the parent exits 0 when the child says the mount is ready, 1 when it
/// failed (the child has said why on standard error); a stop signal to the
/// parent cancels the mount (``MountDaemon``). `-f` stays in the
/// foreground, where SIGINT and SIGTERM unmount; `fusermount3 -u` unmounts
/// either.
struct MountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "weir mount",
        abstract: "Show a .tar.zst (or a .zst) as a read-only folder, on FUSE.",
        discussion: """
        A .tar.zst with a member index (weir's) mounts at once: its tree comes from the index, and a read \
        decodes only the frames that hold its bytes, checked against the seek table and their checksums. \
        A .tar.zst without an index is decoded once to make one in memory (weir --index adds one to the file). \
        A .zst that is not a tar shows as one file, named as weir -d names its output.
        ARCHIVE may be an http:// or https:// URL (a server that serves ranges): its tail is fetched at mount, \
        its frames as reads need them, and every request checks the object is the one mounted (docs/remote.md).
        A damaged frame fails the reads that need it with EIO (the message names the archive, the file \
        and the frame), never with wrong bytes; so does an archive changed while mounted. Writes fail with EROFS.
        Runs in the background once the mount is ready (messages then go to the system log); unmount with \
        fusermount3 -u MOUNTPOINT. See man weir and docs/mount.md.
        """,
        helpNames: [.short, .long, .customShort("H")]
    )

    @Argument(help: ArgumentHelp("The archive to show: a .tar.zst, or any zstd file; a file, or an http(s) URL.",
                                 valueName: "ARCHIVE"))
    var archive: String

    @Argument(help: ArgumentHelp("The folder to show it in.", valueName: "MOUNTPOINT"))
    var mountPoint: String

    @Flag(name: .customShort("f"), help: "Stay in the foreground (SIGINT or SIGTERM unmounts).")
    var foreground = false

    @Option(name: .customShort("o"), parsing: .unconditionalSingleValue,
            help: ArgumentHelp("FUSE mount options, comma-separated (allow_other, …); may repeat.",
                               valueName: "OPTIONS"))
    var options: [String] = []

    @Option(name: [.customShort("M"), .customLong("memory")],
            help: ArgumentHelp("Memory for decoded frames (default 24MiB, or three of the archive's largest frames; "
                                   + "one frame from zstd: 24MiB, checkpoints past it in TMPDIR).",
                               valueName: "SIZE"))
    var memory: ByteCount?

    @Option(name: [.customShort("T"), .customLong("threads")],
            help: ArgumentHelp("Threads serving reads, each decoding its frames (0: the cores; default the cores, "
                + "at least 2).", valueName: "N"))
    var threads: Int?

    @Flag(name: [.customShort("q"), .customLong("quiet")], help: "No notes, only errors.")
    var quiet = false

    @Flag(name: [.customShort("v"), .customLong("verbose")],
          help: "Say when the mount is ready; once unmounted, the frames decoded and names looked up.")
    var verbose = false

    /// Parses `arguments` (those after `mount`) and mounts; exits with its
    /// status: 1 for a usage error, as the rest of weir.
    static func start(_ arguments: [String]) -> Never {
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
            Glibc.exit(0)
        } catch {
            if exitCode(for: error).isSuccess { exit(withError: error) }
            StandardError.write(FileName.displayingEscapes(fullMessage(for: error)) + "\n")
            Glibc.exit(1)
        }
    }

    mutating func validate() throws {
        if let threads, threads < 0 { throw ValidationError("-T takes 0 or more threads") }
    }

    func run() throws {
        Glibc.exit(mount())
    }

    /// Mounts, and returns the exit status.
    func mount() -> Int32 {
        // The mount point as an absolute path, before anything else: a background mount's folder is `/`, and
        // libfuse unmounts by the name it mounted (`mnt` from `/` is `/mnt`, another file system).
        var folder = stat()
        guard let mountPath = Self.realPath(mountPoint),
              FileName.withCString(mountPath, { stat($0, &folder) }) == 0, folder.st_mode & S_IFMT == S_IFDIR else {
            StandardError.write("weir: \(FileName.displayingEscapes(mountPoint)): not a folder to mount on\n")
            return 1
        }
        let path: String
        if RemoteInputs.isURL(archive) {
            // Opened at offsets (docs/remote.md): frames fetched as reads need them, the object's identity
            // checked on every request. Only registered here: the child opens it, after the fork.
            RemoteInputs.register(archive, reading: .atOffsets)
            path = archive
        } else {
            guard let absolute = Self.realPath(archive) else {
                StandardError.write("weir: \(FileName.displayingEscapes(archive)): "
                    + "\(String(cString: strerror(errno)))\n")
                return 1
            }
            path = absolute
        }
        let cores = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let serving = threads.map { $0 == 0 ? cores : $0 } ?? max(2, cores)
        var settings = MountOptions(cacheBytes: memory?.bytes ?? MountOptions.defaultCacheBytes)
        // Without -M, room for three of the archive's frames, however large (docs/mount.md).
        settings.cacheFitsFrames = memory == nil
        if foreground {
            return serve(path: path, on: mountPath, threads: serving, settings: settings,
                         log: { StandardError.write("weir: \($0)\n") }, mayMount: {
                Self.pauseForTests("WEIR_TEST_MOUNT_PAUSE_BEFORE")
                return true
            }, ready: {})
        }
        // The fork comes before anything starts a thread (Dispatch's
        // threads do not survive it): the child opens and mounts.
        let daemon: MountDaemon.Child
        switch MountDaemon.fork() {
        case let .failed(why):
            StandardError.write("weir: \(why)\n")
            return 1
        case .parent(.status(let status)):
            return status
        case .parent(.signal(let number)):
            MountDaemon.end(by: number)
        case let .child(child):
            daemon = child
        }
        // A daemon keeps none of its caller's descriptors (but 0, 1, 2 and
        // its end of the socket pair): one held open would make a caller
        // that waits for it to close (a socket, a pipe) wait as long as the
        // mount lives.
        closeDescriptors(keeping: daemon.descriptor)
        let told = Locked(false)
        let status = serve(path: path, on: mountPath, threads: serving, settings: settings, log: { text in
            // In the background, standard error is gone: the system log has the messages.
            if told.current { FuseMount.systemLog("weir: " + text) } else { StandardError.write("weir: \(text)\n") }
        }, mayMount: {
            Self.pauseForTests("WEIR_TEST_MOUNT_PAUSE_BEFORE")
            return daemon.mayMount()
        }, ready: {
            Self.pauseForTests("WEIR_TEST_MOUNT_PAUSE_READY")
            let null = open("/dev/null", O_RDWR)
            if null >= 0 {
                for fd: Int32 in [0, 1, 2] { dup2(null, fd) }
                if null > 2 { close(null) }
            }
            _ = chdir("/")
            told.withLock { $0 = true }
            daemon.ready()
        })
        return status
    }

    /// The tests' pauses of a background mount's child (only where the
    /// hooks are built): where `variable` names a file, writes its process
    /// id there and waits until the file is gone. `..._BEFORE`: before it
    /// asks to mount (where a tar without an index is decoded); `..._READY`:
    /// mounted, before it reports ready.
    private static func pauseForTests(_ variable: String) {
        #if WEIR_TEST_HOOKS
        guard let name = getenv(variable) else { return }
        let file = fopen(name, "w")
        fputs("\(getpid())\n", file)
        fclose(file)
        while access(name, F_OK) == 0 { usleep(10_000) }
        #endif
    }

    /// The absolute path `name` leads to (links resolved), its bytes kept
    /// as they are (a name need not be UTF-8); nil with errno set.
    private static func realPath(_ name: String) -> String? {
        guard let absolute = FileName.withCString(name, { realpath($0, nil) }) else { return nil }
        defer { free(absolute) }
        return FileName.string(fromBytes: UnsafeRawBufferPointer(start: absolute, count: strlen(absolute)))
    }

    /// Opens the archive and serves it until unmounted; 0, or 1 when it
    /// could not be mounted (said on standard error).
    private func serve(path: String, on mountPath: String, threads: Int, settings: MountOptions,
                       log: @escaping @Sendable (String) -> Void, mayMount: () -> Bool = { true },
                       ready: () -> Void) -> Int32 {
        FuseMount.setStopSignals(blocked: true)
        // The frames and the decoders' windows, freed, go back at once (glibc's allocator, in debug builds):
        // the mount's memory is then what it holds, within -M.
        weir_allocator_return_large_at_once()
        var settings = settings
        if !quiet, StandardError.isTerminal {
            // A tar without an index is decoded once before the mount is ready: its progress line, as -d's.
            let display = ProgressDisplay(), shown = FileName.displayed(archive)
            settings.indexing = { total in display.begin(name: shown, file: 1, files: 1, total: total,
                                                         mode: .decompress) }
            settings.indexed = { display.end() }
        }
        do throws(WeirError) {
            // Named without a URL's password: its messages go to the terminal and the system log.
            let mounted = try MountedArchive(path: path, name: FileName.withoutPassword(archive), options: settings,
                                             log: log)
            if !quiet {
                for note in mounted.notes { StandardError.write("weir: \(FileName.displayed(archive)): \(note)\n") }
            }
            let served = try FuseMount.run(mounted, on: mountPath, options: options, threads: threads,
                                           mayMount: mayMount) {
                if verbose {
                    StandardError.write("weir: \(FileName.displayed(archive)): mounted on \(mountPoint), "
                        + "\(mounted.tree.nodes.count - 1) entries\n")
                }
                ready()
                // The index and the tree's building are done with: their memory goes back, for the
                // frames, once the mount is ready (before the first request is served). From here
                // freed memory goes back once unused for a second: the frames come and go in sizes
                // that jemalloc's kept runs would not all serve again, and a mount lives long.
                weir_allocator_purge()
                weir_allocator_keep_freed(1000)
            }
            // Cancelled before mounting by a stop signal: nothing to say; ended by it, as the parent of a
            // background mount is (1 when the parent said no).
            guard served else {
                FuseMount.endByPendingStopSignal()
                return 1
            }
            // In the foreground, on standard error; in the background, the system log.
            if verbose {
                log("\(FileName.displayed(archive)): unmounted; \(mounted.cache.framesDecoded) frames decoded, "
                    + "\(mounted.namesLookedUp.current) names looked up")
            }
            return 0
        } catch {
            StandardError.write("weir: \(FileName.displayed(error.path)): \(error.reason)\n")
            return 1
        }
    }
}

/// Closes every descriptor but 0, 1, 2 and `kept` (those /proc/self/fd lists).
private func closeDescriptors(keeping kept: Int32) {
    guard let folder = opendir("/proc/self/fd") else { return }
    var open: [Int32] = []
    while let entry = readdir(folder) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if let fd = Int32(name), fd > 2, fd != kept, fd != dirfd(folder) { open.append(fd) }
    }
    closedir(folder)
    for fd in open { close(fd) }
}
