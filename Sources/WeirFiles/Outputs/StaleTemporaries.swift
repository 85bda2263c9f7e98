import Glibc
import WeirSystem

/// The hidden temporaries (`.weir-XXXXXX`) that a weir cut short left
/// behind: by SIGKILL, a crash or a power cut, which no cleanup survives.
///
/// The protocol: each ``OutputFile`` holds an exclusive `flock` on its
/// temporary from its creation until it has its final name or is removed
/// (``lockCreated(_:)``). The lock dies with the process, whatever ends it,
/// and none exists after a reboot; so a temporary on which `flock(LOCK_EX |
/// LOCK_NB)` succeeds belongs to no live weir and can go. A sweep removes
/// those in one folder, once per folder per process (``sweepOnce(folder:)``,
/// called when an output is created there: one `readdir`).
///
/// Creating a file and locking it are two calls, so a sweep can find a new
/// temporary unlocked in between. It then removes it while it holds the
/// lock; its creator, once it has the lock, sees the file has no link left
/// and makes another. A sweep only unlinks a name that still refers to the
/// file it locked, and never follows a symbolic link. Temporaries of weir
/// versions that took no lock look unheld: do not mix them in one folder.
///
/// The engine does not print: the sweeps that removed something wait in
/// ``takeReports()`` for the caller to tell.
package enum StaleTemporaries {
    /// One folder's sweep that removed something.
    package struct Report: Equatable, Sendable {
        /// The folder, as the output's path gives it (`.` for a bare name).
        package var folder: String
        /// How many temporaries were removed.
        package var removed: Int
    }

    /// The folders swept by this process, and the reports not yet taken.
    /// A folder's name is added before its sweep starts, so that threads
    /// creating outputs side by side sweep it once.
    private static let state = Locked<(swept: Set<String>, reports: [Report])>(([], []))

    /// The length of mkstemp's random part.
    static let randomLength = 6

    /// Whether `name` is one of weir's temporaries: `.weir-` and six of
    /// mkstemp's characters (letters and digits).
    static func isTemporaryName(_ name: some Collection<UInt8>) -> Bool {
        let prefix = Array(".weir-".utf8)
        guard name.count == prefix.count + randomLength, name.starts(with: prefix) else { return false }
        return name.dropFirst(prefix.count).allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(byte)
        }
    }

    /// Takes the exclusive lock of a temporary just created (blocking: a
    /// sweep holds it only to remove the file). Returns false when the file
    /// was removed by a sweep before the lock was had: the caller closes it
    /// and creates another. A file system without `flock` leaves the file
    /// unlocked, which sweeps there cannot lock either, so never remove.
    static func lockCreated(_ fd: Int32) -> Bool {
        guard Descriptor.retrying({ Int(flock(fd, LOCK_EX)) }) == 0 else { return true }
        var info = stat()
        return fstat(fd, &info) != 0 || info.st_nlink > 0
    }

    /// Sweeps `folder` unless this process did already; a sweep that
    /// removed something is kept for ``takeReports()``.
    static func sweepOnce(folder: String) {
        let first = state.withLock { $0.swept.insert(folder).inserted }
        guard first else { return }
        let removed = sweep(folder: folder)
        if removed > 0 { state.withLock { $0.reports.append(Report(folder: folder, removed: removed)) } }
    }

    /// The sweeps that removed something since the last call, in the order
    /// they ended; each is given once.
    package static func takeReports() -> [Report] {
        state.withLock { state in
            defer { state.reports = [] }
            return state.reports
        }
    }

    /// Removes the temporaries in `folder` that no process holds; returns
    /// how many. A folder that cannot be read, or a file that cannot be
    /// opened, locked or removed, is left as it is: the sweep is a cleanup,
    /// never a reason to fail.
    package static func sweep(folder: String) -> Int {
        let directory = FileName.withCString(folder) { open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard directory >= 0 else { return 0 }
        defer { close(directory) }
        var removed = 0
        for name in candidates(in: directory) where removeIfUnheld(name, in: directory) {
            removed += 1
        }
        // Records whose `.part` is gone (a cut between its rename and the
        // record's removal), unless a weir holds one: not counted.
        for name in candidates(in: directory, matching: PartialOutput.isStaleRecord) {
            _ = removeIfUnheld(name, in: directory)
        }
        return removed
    }

    /// The names in the folder open as `directory` that look like weir's
    /// temporaries and may be regular files, read whole before any is
    /// removed (what `readdir` returns after an entry is removed is not
    /// specified).
    private static func candidates(in directory: Int32,
                                   matching matches: ([UInt8], Int32) -> Bool = { name, _ in isTemporaryName(name) })
        -> [[UInt8]] {
        let listing = dup(directory)
        guard listing >= 0 else { return [] }
        guard let stream = fdopendir(listing) else {
            close(listing)
            return []
        }
        defer { closedir(stream) }
        var names: [[UInt8]] = []
        while let entry = readdir(stream) {
            let type = entry.pointee.d_type
            guard type == UInt8(DT_REG) || type == UInt8(DT_UNKNOWN) else { continue }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if matches(name, directory) { names.append(name) }
        }
        return names
    }

    /// Removes `name` from `directory` if it is a regular file that no
    /// process holds locked: opened without following a link (and without
    /// blocking, should it have become a FIFO), locked without waiting,
    /// removed while locked and only if the name still refers to that file.
    private static func removeIfUnheld(_ name: [UInt8], in directory: Int32) -> Bool {
        let cName = name.map { CChar(bitPattern: $0) } + [0]
        let fd = openat(directory, cName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }  // after the unlink: the lock is held until then
        var opened = stat()
        guard fstat(fd, &opened) == 0, (opened.st_mode & S_IFMT) == S_IFREG,
              flock(fd, LOCK_EX | LOCK_NB) == 0 else { return false }
        var named = stat()
        guard fstatat(directory, cName, &named, AT_SYMLINK_NOFOLLOW) == 0,
              named.st_dev == opened.st_dev, named.st_ino == opened.st_ino else { return false }
        return unlinkat(directory, cName, 0) == 0
    }
}
