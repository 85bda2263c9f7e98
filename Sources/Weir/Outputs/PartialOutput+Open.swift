import Glibc

extension PartialOutput {
    /// Opens `NAME.part` for the output `path`: resumes it when its record
    /// matches `identity` and `options` and its frames check, else starts it
    /// anew. Nil when a `.part` that weir has no record of is in the way: it
    /// is left alone, and the caller writes a plain temporary file instead.
    ///
    /// - Parameters:
    ///   - identity: ``ResumeRecord/identity(of:)`` of the input.
    ///   - options: what shapes the output's bytes (``CompressionOptions/resumeFingerprint(size:)``).
    ///   - dictionary: the frames' dictionary, for decoding the last kept one.
    /// - Throws: ``WeirError`` when another weir holds the `.part`, or a
    ///   file cannot be created or read.
    package static func open(for path: String, identity: String, options: String,
                             dictionary: ZstdDictionary?) throws(WeirError) -> PartialOutput? {
        let partPath = path + ".part"
        let folder = OutputFile.folder(of: path)
        let name = FileName.bytes(of: path)
        let base = name.lastIndex(of: UInt8(ascii: "/")).map { name[name.index(after: $0)...] } ?? name[...]
        let prefix = name.lastIndex(of: UInt8(ascii: "/")).map { Array(name[...$0]) } ?? []
        let recordPath = FileName.string(fromBytes: prefix + Array(".".utf8) + base + Array(".part.resume".utf8))
        let recordBytes = Self.contents(of: recordPath)
        let parsed = recordBytes.flatMap(ResumeRecord.parse)

        var fd = FileName.withCString(partPath) { Glibc.open($0, O_RDWR | O_CLOEXEC | O_NOFOLLOW) }
        let existed = fd >= 0
        var start = Start.fresh
        if existed {
            guard parsed != nil else {
                Glibc.close(fd)
                return nil
            }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                Glibc.close(fd)
                throw WeirError.partialInUse(path: partPath)
            }
        } else {
            guard errno == ENOENT else { throw WeirError.system(errno, path: partPath, operation: .open) }
            fd = FileName.withCString(partPath) { Glibc.open($0, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) }
            guard fd >= 0 else { throw WeirError.system(errno, path: partPath, operation: .create) }
            _ = flock(fd, LOCK_EX | LOCK_NB)
        }
        var kept: [SeekTable.Entry] = []
        var log: (hash: UInt64, length: Int)?
        if existed, let (record, hash, length) = parsed {
            if let reason = Self.mismatch(record, identity: identity, options: options, part: fd,
                                          dictionary: dictionary, path: partPath) {
                start = .startedOver(reason: reason)
            } else if let checkpoint = record.checkpoint {
                start = .resumed(frames: checkpoint.frames, inputBytes: checkpoint.inputBytes,
                                 outputBytes: checkpoint.outputBytes)
                kept = record.entries
                log = (hash, length)
            }
        }
        let (output, input) = kept.reduce((0, 0)) { ($0.0 + Int($1.compressedSize), $0.1 + Int($1.decompressedSize)) }
        do throws(WeirError) {
            // Cut back to the checkpoint (or to nothing), and write after it.
            guard ftruncate(fd, off_t(output)) == 0, lseek(fd, off_t(output), SEEK_SET) == output else {
                throw WeirError.system(errno, path: partPath, operation: .truncate)
            }
            let record = try Self.openRecord(recordPath, keeping: log?.length, identity: identity, options: options)
            let hash = log?.hash ?? ResumeRecord.hash(Array(ResumeRecord.header(identity: identity,
                                                                                options: options).utf8))
            return PartialOutput(partPath: partPath, recordPath: recordPath, descriptor: Descriptor(fd, path: path),
                                 start: start, kept: kept,
                                 log: Log(record: record, hash: hash, frames: kept.count, outputBytes: output,
                                          inputBytes: input, folderSynced: log != nil),
                                 folder: folder)
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// Why `record` cannot be resumed, or nil when it can: another input or
    /// other options, or kept frames that do not check.
    private static func mismatch(_ record: ResumeRecord, identity: String, options: String, part fd: Int32,
                                 dictionary: ZstdDictionary?, path: String) -> String? {
        if record.identity != identity { return "the input changed since it was written" }
        if record.options != options { return "it was written with other options" }
        guard let checkpoint = record.checkpoint else { return "it holds no whole frame" }
        var status = stat()
        guard fstat(fd, &status) == 0, Int(status.st_size) >= checkpoint.outputBytes else {
            return "it is shorter than its record says"
        }
        let file = Descriptor(fd, path: path)
        var offset = 0
        var magic = [UInt8](repeating: 0, count: 4)
        for entry in record.entries {
            let got = magic.withUnsafeMutableBytes { try? file.read(into: $0, at: offset, operation: .read) }
            guard got == 4, FrameHeader.startsFrame(magic) else { return "its frames are not where its record says" }
            offset += Int(entry.compressedSize)
        }
        guard let last = record.entries.last else { return nil }
        return Self.decodes(last, at: checkpoint.outputBytes - Int(last.compressedSize), in: file,
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

    /// Opens the record for appending: the existing one cut to its last
    /// checkpoint (`length`), or a new one with its header, synced later
    /// with the first checkpoint.
    private static func openRecord(_ path: String, keeping length: Int?, identity: String,
                                   options: String) throws(WeirError) -> Int32 {
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (length == nil ? O_TRUNC : 0)
        let fd = FileName.withCString(path) { Glibc.open($0, flags, 0o600) }
        guard fd >= 0 else { throw WeirError.system(errno, path: path, operation: .create) }
        if let length {
            guard ftruncate(fd, off_t(length)) == 0, lseek(fd, off_t(length), SEEK_SET) == length else {
                Glibc.close(fd)
                throw WeirError.system(errno, path: path, operation: .truncate)
            }
            return fd
        }
        let header = Array(ResumeRecord.header(identity: identity, options: options).utf8)
        do throws(WeirError) {
            try header.withUnsafeBytes { bytes in
                Result { () throws(WeirError) in try Descriptor(fd, path: path).write(bytes, at: 0) }
            }.get()
        } catch {
            Glibc.close(fd)
            throw error
        }
        _ = lseek(fd, off_t(header.count), SEEK_SET)
        return fd
    }

    /// The bytes of the file at `path`, or nil when it cannot be read.
    private static func contents(of path: String) -> [UInt8]? {
        guard let descriptor = try? Descriptor.openForReading(path) else { return nil }
        defer { descriptor.close() }
        guard let size = try? descriptor.status().size else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        let got = bytes.withUnsafeMutableBytes { try? descriptor.read(into: $0, at: 0, operation: .read) }
        return got == size ? bytes : nil
    }
}
