import Glibc
import WeirSystem

extension PartialOutput {
    /// Removes the `.part` and record an earlier resumable run of `path`
    /// left, once a run that did not resume (`--no-resume`, `--adapt`,
    /// `--rsyncable`, `--no-seek-table`, another format, a small input) has
    /// put a whole output at `path`: what they hold is of an output now
    /// replaced, and a later run would only start over from them. Called
    /// after the output took its name. Returns whether they were removed.
    ///
    /// Only weir's own, as resuming judges them: the record a regular file
    /// (not followed if a link) that starts as a record does and that no
    /// live weir holds (`flock`, without waiting); the `.part` removed only
    /// when it is the regular file of one link that the record names, else
    /// left as it is (a `.part` weir has no record of is not weir's). A
    /// folder or anything else at either name is left alone. A cleanup,
    /// never a reason to fail: an error leaves the names as they were.
    static func removeSuperseded(for path: String) -> Bool {
        let (partPath, recordPath) = hiddenPaths(for: path)
        let record = FileName.withCString(recordPath) {
            Glibc.open($0, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        }
        guard record >= 0 else { return false }
        defer { Glibc.close(record) }  // after the unlinks: the lock is held until then
        var info = stat()
        guard fstat(record, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size < 1 << 30,
              flock(record, LOCK_EX | LOCK_NB) == 0, isNamed(recordPath, info) else { return false }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        let got = bytes.withUnsafeMutableBytes {
            try? Descriptor(record, path: recordPath).read(into: $0, at: 0, operation: .read)
        }
        let header = ResumeRecord.readable.contains { bytes.starts(with: Array(($0 + "\n").utf8)) }
        guard got == bytes.count, header else { return false }
        if let parsed = ResumeRecord.parse(bytes) { removePart(partPath, named: parsed.record.part) }
        return FileName.withCString(recordPath, unlink) == 0
    }

    /// Removes the `.part` at `partPath` when it is the regular file of one
    /// link whose `DEVICE INODE` is `named`, and no weir holds it.
    private static func removePart(_ partPath: String, named: String) {
        let part = FileName.withCString(partPath) {
            Glibc.open($0, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        }
        guard part >= 0 else { return }
        defer { Glibc.close(part) }
        var info = stat()
        guard fstat(part, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_nlink == 1,
              ResumeRecord.part(info) == named, flock(part, LOCK_EX | LOCK_NB) == 0,
              isNamed(partPath, info) else { return }
        FileName.withCString(partPath, unlink)
    }

    /// Whether `path` (not followed if a link) is still the file of `info`.
    private static func isNamed(_ path: String, _ info: stat) -> Bool {
        var named = stat()
        return FileName.withCString(path, { lstat($0, &named) }) == 0 && named.st_dev == info.st_dev
            && named.st_ino == info.st_ino
    }
}
