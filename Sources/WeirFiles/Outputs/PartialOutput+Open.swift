import Glibc
import WeirFormats
import WeirSystem

extension PartialOutput {
    /// Opens `NAME.part` for the output `path`: resumes it when its record
    /// matches `identity` and `options`, names this very `.part`, and its
    /// frames check; else starts anew. Nil when the run cannot be resumed
    /// without touching what is not weir's: a `.part` with no record (left
    /// alone), or a folder at either name; the caller then writes a plain
    /// temporary file instead.
    ///
    /// Never written through is a file weir did not create: the `.part` is
    /// opened without following links, and kept only when it is a regular
    /// file with one link whose inode is the one its record names (a hard
    /// link to the input put at the name, or another file's `.part` copied
    /// there, is not). Starting over makes a new `.part` and a new record,
    /// each a temporary renamed over the name: the old file is never
    /// truncated, whatever it is.
    ///
    /// - Parameters:
    ///   - identity: ``ResumeRecord/identity(of:)`` of the input.
    ///   - options: what shapes the output's bytes (``CompressionOptions/resumeFingerprint(size:)``,
    ///     ``DecompressionOptions/resumeFingerprint``).
    ///   - holds: frames (a compression) or their content (a decompression).
    ///   - dictionary: the frames' dictionary, for decoding the kept ones.
    ///   - input: the input: a compression's kept frames were made of its
    ///     bytes, a decompression's are read from it and checked against
    ///     the `.part` (``Check``).
    /// - Throws: ``WeirError`` when another weir holds the `.part`, or a
    ///   file cannot be created or read.
    package static func open(
        for path: String, identity: String, options: String, holds: Holds = .frames,
        dictionary: ZstdDictionary?, input: Descriptor? = nil, verifies: Bool = false,
        checkpointInterval: Double = interval
    ) throws(WeirError) -> PartialOutput? {
        let (partPath, recordPath) = Self.hiddenPaths(for: path)
        let folder = OutputFile.folder(of: path)
        let partKind = NameKind(at: partPath), recordKind = NameKind(at: recordPath)
        // Ours only when its record is there: a record is made (and its
        // name synced) before its `.part`.
        if partKind != .absent, recordKind == .absent { return nil }
        if partKind == .directory || recordKind == .directory { return nil }
        var start = Start.fresh
        if recordKind != .absent {
            let check = Check(identity: identity, options: options, holds: holds, dictionary: dictionary,
                              input: input, path: partPath, decodes: verifies)
            switch try Self.reopen(partPath, recordPath, present: partKind != .absent, check: check) {
            case .resumed(let kept):
                return kept.partial(partPath: partPath, recordPath: recordPath, holds: holds, folder: folder,
                                    checkpointInterval: checkpointInterval)
            case .startOver(let reason):
                start = .startedOver(reason: reason)
            case .fresh:
                break
            }
        }
        return try Self.create(partPath, recordPath, start: start, identity: identity, options: options,
                               holds: holds, folder: folder, for: path, checkpointInterval: checkpointInterval)
    }

    /// Why a run of `path` that could be resumed is not: a folder at its
    /// `.part`'s or its record's name (``open(for:identity:options:holds:dictionary:input:)``
    /// leaves it alone), as a sentence for the user; nil otherwise.
    package static func folderInTheWay(for path: String) -> String? {
        let (partPath, recordPath) = hiddenPaths(for: path)
        guard let folder = [recordPath, partPath].first(where: { NameKind(at: $0) == .directory }) else { return nil }
        return "\(FileName.displayed(folder)) is a folder: this run cannot be resumed if stopped "
            + "(remove the folder to make it resumable)"
    }

    /// What is at a hidden name, not following links.
    enum NameKind: Equatable {
        case absent, directory, other

        init(at path: String) {
            var info = stat()
            if FileName.withCString(path, { lstat($0, &info) }) != 0 {
                self = errno == ENOENT ? .absent : .other
            } else {
                self = (info.st_mode & S_IFMT) == S_IFDIR ? .directory : .other
            }
        }
    }

    /// Makes a new `.part` and its record, each a locked temporary renamed
    /// to its name (the record first, naming the new `.part`'s inode), over
    /// whatever was there: nil when a name cannot be taken (a folder
    /// appeared there).
    private static func create(_ partPath: String, _ recordPath: String, start: Start, identity: String,
                               options: String, holds: Holds, folder: String, for path: String,
                               checkpointInterval: Double) throws(WeirError) -> PartialOutput? {
        let folderBytes = Self.folderBytes(of: path)
        let (fd, partTemporary) = try OutputFile.createTemporary(in: folderBytes, for: partPath)
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let error = WeirError.system(errno, path: partPath, operation: .create)
            Self.drop(fd, partTemporary)
            throw error
        }
        let header = ResumeRecord.header(identity: identity, options: options, part: ResumeRecord.part(info))
        let record: Int32
        do throws(WeirError) {
            let (made, recordTemporary) = try OutputFile.createTemporary(in: folderBytes, for: recordPath)
            record = made
            let bytes = Array(header.utf8)
            do throws(WeirError) {
                try bytes.withUnsafeBytes { bytes in
                    Result { () throws(WeirError) in try Descriptor(record, path: recordPath).write(bytes, at: 0) }
                }.get()
            } catch {
                Self.drop(record, recordTemporary)
                throw error
            }
            _ = lseek(record, off_t(bytes.count), SEEK_SET)
            // A hidden name is taken only by a synced file (as every output's
            // is): after a power cut the record is whole or absent, and the
            // `.part` is the empty file it names. A failed sync is final.
            for (file, name) in [(record, recordPath), (fd, partPath)]
            where Descriptor.retrying({ Int(fdatasync(file)) }) != 0 {
                let error = WeirError.system(errno, path: name, operation: .sync)
                Self.drop(record, recordTemporary)
                throw error
            }
            guard Self.rename(recordTemporary, to: recordPath) else {
                Self.drop(record, recordTemporary)
                Self.drop(fd, partTemporary)
                return nil
            }
            do throws(WeirError) {
                try DiskSync.folder(folder)
            } catch {
                // Nothing written yet: the record goes, and the run stops naming its output.
                Glibc.close(record)
                FileName.withCString(recordPath, unlink)
                guard let code = error.kind.errno else { throw error }
                throw WeirError.recordFolderSyncFailed(code, output: path, folder: folder)
            }
            guard Self.rename(partTemporary, to: partPath) else {
                Glibc.close(record)
                FileName.withCString(recordPath, unlink)
                Self.drop(fd, partTemporary)
                return nil
            }
        } catch {
            Self.drop(fd, partTemporary)
            throw error
        }
        return PartialOutput(partPath: partPath, recordPath: recordPath, descriptor: Descriptor(fd, path: path),
                             start: start, holds: holds, kept: [],
                             log: Log(record: record, hash: ResumeRecord.hash(Array(header.utf8)), frames: 0,
                                      outputBytes: 0, inputBytes: 0, folderSynced: false),
                             folder: folder, checkpointInterval: checkpointInterval)
    }

    /// `rename`, true when it succeeded.
    private static func rename(_ from: String, to: String) -> Bool {
        FileName.withCString(from) { from in FileName.withCString(to) { Glibc.rename(from, $0) } } == 0
    }

    /// Closes and removes a temporary of ours.
    private static func drop(_ fd: Int32, _ temporary: String) {
        Glibc.close(fd)
        FileName.withCString(temporary, unlink)
    }

    /// The folder's bytes of `path` up to its last slash (empty for a bare name).
    static func folderBytes(of path: String) -> [UInt8] {
        let name = FileName.bytes(of: path)
        return name.lastIndex(of: UInt8(ascii: "/")).map { Array(name[...$0]) } ?? []
    }

    /// `NAME.part` and `.NAME.part.resume`, beside `NAME`; the same `STEM`
    /// in both (`STEM.part`, `.STEM.part.resume`), so that each names the
    /// other. `STEM` is `NAME` when the record's name fits in NAME_MAX (255
    /// bytes); a longer `NAME` is cut (at a character's start) and given a
    /// hash of the whole, `~` and 16 hex digits: every output name that
    /// fits has hidden names that fit, and two long names sharing their
    /// first bytes still have different ones.
    static func hiddenPaths(for path: String) -> (part: String, record: String) {
        let name = FileName.bytes(of: path)
        let slash = name.lastIndex(of: UInt8(ascii: "/"))
        var stem = Array(slash.map { name[name.index(after: $0)...] } ?? name[...])
        let prefix = slash.map { Array(name[...$0]) } ?? []
        let longest = Int(NAME_MAX) - ".".utf8.count - ".part.resume".utf8.count
        if stem.count > longest {
            let hash = String(ResumeRecord.hash(stem), radix: 16)
            let mark = Array(("~" + String(repeating: "0", count: 16 - hash.count) + hash).utf8)
            var cut = longest - mark.count
            while cut > 0, stem[cut] & 0xC0 == 0x80 { cut -= 1 }  // not inside a UTF-8 character
            stem = Array(stem[..<cut]) + mark
        }
        return (FileName.string(fromBytes: prefix + stem + Array(".part".utf8)),
                FileName.string(fromBytes: prefix + Array(".".utf8) + stem + Array(".part.resume".utf8)))
    }

    /// `.NAME.part.resume`, beside `NAME` (shortened as ``hiddenPaths(for:)`` says).
    static func recordPath(for path: String) -> String { hiddenPaths(for: path).record }

    /// Whether the entry `name`, at `path` (its folder's bytes, a slash,
    /// `name`), is what a stopped run keeps for resuming: a record
    /// (`.STEM.part.resume`), or a `STEM.part` with its record beside it.
    static func isKept(_ name: [UInt8], at path: [UInt8]) -> Bool {
        let part = Array(".part".utf8)
        let record = part + Array(".resume".utf8)
        if name.first == UInt8(ascii: "."), name.count > record.count + 1,
           name.suffix(record.count).elementsEqual(record) { return true }
        guard name.count > part.count, name.suffix(part.count).elementsEqual(part) else { return false }
        let folder = path.dropLast(name.count)
        return FileStatus.exists(
            FileName.string(fromBytes: Array(folder) + Array(".".utf8) + name + Array(".resume".utf8)))
    }

    /// Whether `name`, in the folder open as `directory`, is a record whose
    /// `.part` is gone: `.STEM.part.resume` without `STEM.part`.
    static func isStaleRecord(_ name: [UInt8], in directory: Int32) -> Bool {
        let suffix = Array(".resume".utf8)
        guard name.first == UInt8(ascii: "."), name.count > suffix.count + ".x.part".utf8.count,
              name.suffix(suffix.count).elementsEqual(suffix),
              name.dropLast(suffix.count).suffix(5).elementsEqual(".part".utf8) else { return false }
        let part = name.dropFirst().dropLast(suffix.count).map { CChar(bitPattern: $0) } + [0]
        var status = stat()
        return fstatat(directory, part, &status, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT
    }
}
