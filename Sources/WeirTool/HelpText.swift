/// The help of `weir`'s flags whose text is longer than a line, one entry
/// a flag, named after the flag's property, in the order `--help` shows
/// them (WeirCommand+Options.swift puts each beside its flag). `man weir`
/// says the same at more length (ManualTests keep the two in step).
enum HelpText {
    // Operation
    static let list = """
        List the frames of compressed files (sizes, ratio, check); -v: zstd's details, then one row per frame.
        """
    static let index = """
        Make multi-frame zstd files seekable in place, without recompressing: append one seek table that lists \
        every frame (pzstd's files, concatenations), so any reader of zstd's seekable format jumps to a range.
        """
    static let train = """
        Train a dictionary from the FILEs (one sample per file, or -B SIZE samples; at least 5), written to -o \
        DICT (default: dictionary), as zstd --train: fastCover, a search of k with d=8, f=20, steps=4, split=75, \
        accel=1 (after another --train flag: that one's builder).
        """
    static let trainCover = """
        Train with the cover builder: --train-cover[=LIST], LIST of k=N, d=N, steps=N, split=N (percent), \
        shrink[=N], comma-separated; without k or d, a search (by default of d 6 and 8, 40 steps of k, \
        split=100).
        """
    static let trainFastCover = """
        Train with the fastCover builder: --train-fastcover[=LIST], LIST of k=N, d=N, f=N, steps=N, split=N, \
        accel=N (1 to 10), shrink[=N]; without k or d, a search (by default of d 6 and 8, 40 steps of k; f=20, \
        split=75, accel=1).
        """
    static let benchmark = """
        Benchmark, as zstd -b: compress and decompress the FILEs in memory at levels -b# (default 3) to -e#, \
        weir's parallel frames beside libzstd's own call for the same settings (no FILE: a generated sample).
        """

    // OperationFlags
    static let recursive = """
        Process the files in the folders given, and in their folders (symbolic links found are skipped unless \
        -f).
        """
    static let fileLists = """
        Also process the files named in FILE, one per line (repeatable).
        """
    static let indexFrom = """
        With --index and one FILE: read the member index from TAR, the tar FILE's frames hold, instead of \
        decoding FILE; TAR must match every frame's size and content checksum.
        """

    // BenchmarkFlags
    static let seconds = """
        Benchmark: run each measurement at least N seconds, its fastest run counting (default 3; 0: once).
        """
    static let priority = """
        Benchmark at the highest scheduling priority, as zstd's --priority=rt (root only).
        """

    // OutputFlags
    static let output = """
        Write the result to FILE; - is standard output. Several inputs are written into FILE in turn, as zstd \
        does (asked without -f; --rm then keeps them).
        """
    static let removeInput = """
        Remove each input file after it was processed successfully (of -k and --rm, the last one wins).
        """
    static let noSync = """
        Do not wait for outputs to reach the disk before they take their names and inputs are removed: faster on \
        many small files, but a power cut can then lose an output or, with --rm, its input.
        """
    static let noResume = """
        Compressing or decompressing a file to a file, do not keep what is done when stopped: by default the \
        output is written as NAME.part (with a record, .NAME.part.resume) and a stopped run (Ctrl-C, a kill, a \
        power cut) leaves it, synced every 2 s, for the same command to go on from there; so does a run whose \
        input fails to read. Decompression resumes files weir wrote in 8 frames or more (their seek table says \
        so), not single-frame ones. Compressing with -r, an existing output that is already the input's finished \
        compression is then skipped, not refused (a stopped -r run again).
        """
    static let outputDirFlat = """
        Write every output into DIR (an existing folder), under its own name without its folders.
        """
    static let outputDirMirror = """
        Write every output under DIR, in the folders of its input (created with their modes; an input with .. is \
        refused).
        """

    // CompressionFlags
    static let level = """
        The compression level, 1 to 19 (default 3), 20 to 22 with --ultra; -# is the same (-19), as in zstd.
        """
    static let fast = """
        Faster, negative levels: --fast[=N], N >= 1 (default 1).
        """
    static let chunkSize = """
        Input bytes per independent frame (default by level: 8MiB, 16MiB at -7 and -8, 32MiB from -9, 64MiB from \
        -17, 256MiB and 512MiB with --ultra, 8MiB with --adapt; a smaller file is cut into one frame per worker, \
        from -17 not below 4 windows as zstd -T); -B is zstd's job size. Training: cut each file into samples of \
        SIZE, at most 128K (0: one sample per file).
        """
    static let adapt = """
        Adapt the level to how fast the output drains: --adapt[=min=N,max=N] (default: every level, from the one \
        chosen, default 3). Each frame's level is chosen as it starts, from how busy the workers and the output \
        are; -v says each change. Not resumable.
        """
    static let rsyncable = """
        Cut frames where the content says, so that a change early in the input leaves later frames \
        byte-identical (for rsync and deduplicating backups); frames average --chunk-size, up to twice it.
        """
    static let contentSize = """
        Write each frame's decompressed size in its header (default: on; without it, weir -d decodes frames one \
        at a time).
        """
    static let streamSize = """
        The exact size of a piped input: another size is an error (files: ignored).
        """
    static let format = """
        The compressed format written: zstd, or gzip, xz, lz4 (independent members, side by side on -T workers) \
        and lzma (one stream); -d reads all five by magic.
        """
    static let excludeCompressed = """
        Skip inputs that are already compressed: .zst .tzst .gz .tgz .lzma .xz .txz .lz4 .tlz4.
        """
    static let zstdParameters = """
        libzstd's parameters over the level's, as zstd: wlog=, clog=, hlog=, slog=, mml=, tlen=, strat=, lhlog=, \
        lmml=, lblog=, lhrlog= (or windowLog=, chainLog=...); ovlog= is accepted and does nothing (weir's frames \
        do not overlap). Decompressing, wlog=N sets the memory limit as --long=N.
        """
    static let compressLiterals = """
        Always (or never) compress literals with Huffman (default: as the level does).
        """
    static let rowMatchFinder = """
        Always (or never) use the row-based match finder of the greedy, lazy and lazy2 strategies (the middle \
        levels; default: as libzstd decides).
        """
    static let targetCompressedBlockSize = """
        Aim every compressed block at about SIZE bytes, 64 to 128KiB (0: full blocks, the default): a streaming \
        reader gets data sooner, the ratio drops a little.
        """
    static let showDefaultCParams = """
        Print, for each file, the parameters libzstd picks for its level and size, then compress it.
        """

    // DecompressionFlags
    static let passThrough = """
        Copy input that is not zstd to the output unchanged, as zcat -f (default: with -dcf).
        """
    static let sparse = """
        Make holes of the zero blocks of the output (default: on for files, off for stdout).
        """
    static let ranges = """
        Decompress only these bytes of the content: START:END (END excluded), START:+LENGTH, START: or :END, \
        sizes with K, M, G, T (1G:+1M), comma-separated or repeated; written in the order given, to standard \
        output unless -o. From a file, only the frames holding them are read and decoded (a seek table finds \
        them at once); from a pipe, in increasing order, the bytes before are decoded and dropped.
        """

    // MemberFlags
    static let members = """
        With -l: list the members of a .tar.zst as tar tf does (with -v as tar tvf), from the member index weir \
        writes when it compresses a tar; nothing is decoded.
        """
    static let member = """
        With -d: write a tar stream of the members matching PATTERN (repeatable; tar's --wildcards, * matching /; \
        a folder takes everything under it), to standard output unless -o, for tar x; only the frames holding \
        them are read and decoded (from a pipe: decoded, picked as they pass).
        """

    // DictionaryFlags
    static let dictionaryFile = """
        Compress or decompress every frame with the dictionary DICT (from zstd --train or weir --train).
        """
    static let noDictionaryID = """
        With -D, leave the dictionary's ID out of every frame header (decoding then needs the right -D without a \
        check).
        """
    static let maxDictionary = """
        The largest dictionary training makes (default 112640).
        """
    static let dictionaryID = """
        The ID of the dictionary training makes, which frames compressed with it carry (default: a hash of its \
        content, 32768 to 2^31-1; zstd reserves the IDs outside for public dictionaries).
        """
    static let patchFrom = """
        Compress FILE as a patch against the old file OLD (one frame, OLD as its prefix, a window and --long that \
        reach all of OLD, -T as libzstd's own workers), or with -d decode a patch given the same OLD, as zstd \
        --patch-from; one input, not with -D.
        """
    static let long = """
        Long-distance matching with a 2^N-byte window: --long[=N], N from 10 to 31 (default 27). Each frame's \
        chunk becomes at least the window, so memory is (threads + 1) x 2 x 2^N. Decompressing, accept windows \
        up to 2^N (as -M).
        """

    // ResourceFlags
    static let threads = """
        Worker threads; 0 means one per core this process may use (the default: its CPU affinity and cgroup CPU \
        quota counted, fewer under a cgroup memory limit; -v says which limit chose). Training: the parameters \
        tried side by side (default 1, as zstd).
        """
    static let singleThread = """
        One worker, as -T1 (of -T and --single-thread, the last one wins).
        """
    static let autoThreads = """
        What -T0 counts (default: logical, every core weir may use).
        """
    static let check = """
        Write (compress) or verify (decompress) content checksums (default: on).
        """
    static let verify = """
        Compressing: decode every frame and compare it with its input before it is written; a frame that differs \
        fails its file, which is not written, and its input is kept (also with --rm). Decompressing and testing, \
        the content checksums are this check (so --verify cannot go with --no-check there).
        """
    static let memory = """
        Decompression memory: frames in flight, their buffers and the frame being read (default 8MiB per thread \
        and 16MiB more; for larger frames, as weir writes from -9, one frame per thread and one more, up to \
        256MiB), and the largest window a frame may use (default 128MiB; under a cgroup memory limit below \
        256MiB, about half of it). Training: the most sample bytes loaded.
        """
    static let mmap = """
        Map regular input files into memory rather than read() them (default: on; pipes are always read).
        """
    static let asyncio = """
        Accepted for zstd's scripts: weir's reads and writes always overlap the work (DispatchIO).
        """

    // MessageFlags
    static let progress = """
        Show a live progress line on stderr (default: when stderr is a terminal). --progress=json: one JSON \
        object per line instead, four a second and one as each file ends (keys under PROGRESS FOR PROGRAMS).
        """
    static let sizeHint = """
        The input's size when it cannot be known (a pipe), for the progress percentage; as zstd, libzstd sizes a \
        piped input of one frame's tables for it.
        """
    static let trace = """
        Append one CSV line per frame compressed or decompressed to FILE, as zstd's --trace (libzstd's own trace \
        hooks).
        """
    static let fakeStderrIsConsole = """
        zstd's test hook: decide on the progress line and the summaries as if stderr were a terminal.
        """
    static let traceFileStat = """
        zstd's test hook: print on stderr, in zstd's words, each check of a file's status the command makes \
        (terminals, links, existing outputs).
        """
}
