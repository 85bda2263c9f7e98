import Glibc

extension PartialOutput {
    /// Opens `NAME.part` for the output `path`: resumes it when its record
    /// matches `identity` and `options` and its frames check, else starts it
    /// anew. Nil when a `.part` that weir has no record of is in the way: it
    /// is left alone, and the caller writes a plain temporary file instead.
    ///
    /// - Parameters:
    ///   - identity: ``ResumeRecord/identity(of:)`` of the input.
    ///   - options: what shapes the output's bytes (``CompressionOptions/resumeFingerprint(size:)``,
    ///     ``DecompressionOptions/resumeFingerprint``).
    ///   - holds: frames (a compression) or their content (a decompression).
    ///   - dictionary: the frames' dictionary, for decoding the last kept one.
    ///   - input: a decompression's input, whose last kept frame is decoded
    ///     and compared with the `.part`'s last bytes.
    /// - Throws: ``WeirError`` when another weir holds the `.part`, or a
    ///   file cannot be created or read.
    package static func open(for path: String, identity: String, options: String, holds: Holds = .frames,
                             dictionary: ZstdDictionary?, input: Descriptor? = nil) throws(WeirError) -> PartialOutput? {
        let partPath = path + ".part"
        let recordPath = Self.recordPath(for: path)
        let folder = OutputFile.folder(of: path)
        var fd = FileName.withCString(partPath) { Glibc.open($0, O_RDWR | O_CLOEXEC | O_NOFOLLOW) }
        guard fd >= 0 || errno == ENOENT else { throw WeirError.system(errno, path: partPath, operation: .open) }
        var start = Start.fresh
        var kept: [SeekTable.Entry] = []
        var log: (record: Int32, hash: UInt64)?
        if fd >= 0 {
            // Ours only when its record is there: a record is made (and its
            // name synced) before its `.part`.
            let record = FileName.withCString(recordPath) { Glibc.open($0, O_RDWR | O_CLOEXEC | O_NOFOLLOW) }
            guard record >= 0 else {
                Glibc.close(fd)
                return nil
            }
            guard flock(record, LOCK_EX | LOCK_NB) == 0, flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                Glibc.close(fd)
                Glibc.close(record)
                throw WeirError.partialInUse(path: partPath)
            }
            let reading = Descriptor(record, path: recordPath)
            if let (parsed, hash, length) = Self.contents(of: reading).flatMap(ResumeRecord.parse) {
                if let reason = Self.mismatch(parsed, identity: identity, options: options, part: fd, holds: holds,
                                              dictionary: dictionary, input: input, path: partPath) {
                    start = .startedOver(reason: reason)
                } else if let checkpoint = parsed.checkpoint {
                    let totals = holds.totals(of: checkpoint)
                    start = .resumed(frames: checkpoint.frames, inputBytes: totals.input, outputBytes: totals.output)
                    kept = parsed.entries
                    if ftruncate(record, off_t(length)) == 0, lseek(record, off_t(length), SEEK_SET) == length {
                        log = (record, hash)
                    }
                }
            } else {
                start = .startedOver(reason: "its record cannot be read")
            }
            if log == nil { Glibc.close(record) }
        }
        do throws(WeirError) {
            let record = if let log { log.record } else {
                try Self.createRecord(recordPath, identity: identity, options: options, folder: folder)
            }
            if fd < 0 {
                fd = FileName.withCString(partPath) { Glibc.open($0, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) }
                guard fd >= 0 else {
                    Glibc.close(record)
                    throw WeirError.system(errno, path: partPath, operation: .create)
                }
                _ = flock(fd, LOCK_EX | LOCK_NB)
            }
            let (output, input) = kept.reduce((0, 0)) { total, entry in
                let sizes = holds.sizes(of: entry)
                return (total.0 + sizes.output, total.1 + sizes.input)
            }
            // Cut back to the checkpoint (or to nothing), and write after it.
            guard ftruncate(fd, off_t(output)) == 0, lseek(fd, off_t(output), SEEK_SET) == output else {
                Glibc.close(record)
                throw WeirError.system(errno, path: partPath, operation: .truncate)
            }
            let hash = log?.hash ?? ResumeRecord.hash(Array(ResumeRecord.header(identity: identity,
                                                                                options: options).utf8))
            return PartialOutput(partPath: partPath, recordPath: recordPath, descriptor: Descriptor(fd, path: path),
                                 start: start, holds: holds, kept: kept,
                                 log: Log(record: record, hash: hash, frames: kept.count, outputBytes: output,
                                          inputBytes: input, folderSynced: log != nil),
                                 folder: folder)
        } catch {
            if fd >= 0 { Glibc.close(fd) }
            throw error
        }
    }

    /// `.NAME.part.resume`, beside `NAME`.
    static func recordPath(for path: String) -> String {
        let name = FileName.bytes(of: path)
        let slash = name.lastIndex(of: UInt8(ascii: "/"))
        let base = slash.map { name[name.index(after: $0)...] } ?? name[...]
        let prefix = slash.map { Array(name[...$0]) } ?? []
        return FileName.string(fromBytes: prefix + Array(".".utf8) + base + Array(".part.resume".utf8))
    }

    /// Whether the entry `name`, at `path` (its folder's bytes, a slash,
    /// `name`), is what a stopped run keeps for resuming: a record
    /// (`.NAME.part.resume`), or a `NAME.part` with its record beside it.
    static func isKept(_ name: [UInt8], at path: [UInt8]) -> Bool {
        let part = Array(".part".utf8)
        let record = part + Array(".resume".utf8)
        if name.first == UInt8(ascii: "."), name.count > record.count + 1,
           name.suffix(record.count).elementsEqual(record) { return true }
        guard name.count > part.count, name.suffix(part.count).elementsEqual(part) else { return false }
        let folder = path.dropLast(name.count)
        return FileStatus.exists(recordPath(for: FileName.string(fromBytes: Array(folder) + name.dropLast(part.count))))
    }

    /// Whether `name`, in the folder open as `directory`, is a record whose
    /// `.part` is gone: `.NAME.part.resume` without `NAME.part`.
    static func isStaleRecord(_ name: [UInt8], in directory: Int32) -> Bool {
        let suffix = Array(".resume".utf8)
        guard name.first == UInt8(ascii: "."), name.count > suffix.count + ".x.part".utf8.count,
              name.suffix(suffix.count).elementsEqual(suffix),
              name.dropLast(suffix.count).suffix(5).elementsEqual(".part".utf8) else { return false }
        let part = name.dropFirst().dropLast(suffix.count).map { CChar(bitPattern: $0) } + [0]
        var status = stat()
        return fstatat(directory, part, &status, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT
    }

    /// Why `record` cannot be resumed, or nil when it can: another input or
    /// other options, or kept frames that do not check.
    private static func mismatch(_ record: ResumeRecord, identity: String, options: String, part fd: Int32,
                                 holds: Holds, dictionary: ZstdDictionary?, input: Descriptor?,
                                 path: String) -> String? {
        if record.identity != identity { return "the input changed since it was written" }
        if record.options != options { return "it was written with other options" }
        guard let checkpoint = record.checkpoint else { return "it holds no whole frame" }
        let totals = holds.totals(of: checkpoint)
        var status = stat()
        guard fstat(fd, &status) == 0, Int(status.st_size) >= totals.output else {
            return "it is shorter than its record says"
        }
        let file = Descriptor(fd, path: path)
        // The frames: in the `.part` (a compression) or in the input.
        guard let frames = holds == .frames ? file : input else { return "its input cannot be read" }
        var offset = 0
        var magic = [UInt8](repeating: 0, count: 4)
        for entry in record.entries {
            let got = magic.withUnsafeMutableBytes { try? frames.read(into: $0, at: offset, operation: .read) }
            guard got == 4, FrameHeader.startsFrame(magic) else { return "its frames are not where its record says" }
            offset += Int(entry.compressedSize)
        }
        guard let last = record.entries.last else { return nil }
        if holds == .content {
            return Self.holdsContent(of: last, at: totals.input - Int(last.compressedSize), in: frames,
                                     endingAt: totals.output, of: file, dictionary: dictionary)
                ? nil : "its last frame's content is not the input's"
        }
        return Self.decodes(last, at: totals.output - Int(last.compressedSize), in: file,
                            dictionary: dictionary, path: path) ? nil : "its last frame does not decode"
    }

    /// Whether the frame `entry` at `offset` decodes, checksum included, to
    /// as many bytes as the entry says.
    private static func decodes(_ entry: SeekTable.Entry, at offset: Int, in file: Descriptor,
                                dictionary: ZstdDictionary?, path: String) -> Bool {
        let size = Int(entry.decompressedSize)
        var frame = [UInt8](repeating: 0, count: Int(entry.compressedSize))
        let got = frame.withUnsafeMutableBytes { try? file.read(into: $0, at: offset, operation: .read) }
        guard got == frame.count, let verifier = try? FrameVerifier(dictionary: dictionary, path: path) else {
            return false
        }
        return frame.withUnsafeBytes { (try? verifier.decodedCount($0, capacity: size)) == size }
    }

    /// Whether the frame `entry` at `offset` of `input` decodes, checksum
    /// included, to the bytes of `file` that end at `end`: a decompression's
    /// last kept frame, whose content a cut could have left short or a
    /// damage changed.
    private static func holdsContent(of entry: SeekTable.Entry, at offset: Int, in input: Descriptor, endingAt end: Int,
                                     of file: Descriptor, dictionary: ZstdDictionary?) -> Bool {
        let size = Int(entry.decompressedSize)
        var frame = [UInt8](repeating: 0, count: Int(entry.compressedSize))
        var content = [UInt8](repeating: 0, count: size)
        let got = frame.withUnsafeMutableBytes { try? input.read(into: $0, at: offset, operation: .read) }
        let kept = content.withUnsafeMutableBytes { try? file.read(into: $0, at: end - size, operation: .read) }
        guard offset >= 0, got == frame.count, kept == size,
              let verifier = try? FrameVerifier(dictionary: dictionary, path: input.path) else { return false }
        return frame.withUnsafeBytes { frame in
            content.withUnsafeBytes { content in
                (try? verifier.check(frame, against: content, frame: 0, offset: offset, path: input.path)) != nil
            }
        }
    }

    /// Creates the record with its header, locked (as a temporary is:
    /// ``StaleTemporaries``), and syncs its folder, so that no `.part` is
    /// ever on disk without it.
    private static func createRecord(_ path: String, identity: String, options: String,
                                     folder: String) throws(WeirError) -> Int32 {
        while true {
            let fd = FileName.withCString(path) { Glibc.open($0, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600) }
            guard fd >= 0 else { throw WeirError.system(errno, path: path, operation: .create) }
            guard StaleTemporaries.lockCreated(fd) else {
                Glibc.close(fd)
                continue
            }
            let header = Array(ResumeRecord.header(identity: identity, options: options).utf8)
            do throws(WeirError) {
                try header.withUnsafeBytes { bytes in
                    Result { () throws(WeirError) in try Descriptor(fd, path: path).write(bytes, at: 0) }
                }.get()
                try DiskSync.folder(folder)
            } catch {
                Glibc.close(fd)
                throw error
            }
            _ = lseek(fd, off_t(header.count), SEEK_SET)
            return fd
        }
    }

    /// The bytes of the file open as `file`, or nil when it cannot be read.
    private static func contents(of file: Descriptor) -> [UInt8]? {
        guard let size = try? file.status().size else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        let got = bytes.withUnsafeMutableBytes { try? file.read(into: $0, at: 0, operation: .read) }
        return got == size ? bytes : nil
    }
}
