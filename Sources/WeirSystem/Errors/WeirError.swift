import Glibc

/// The one error type of the Weir library.
///
/// Every error carries the file it concerns (`path`, as the caller named it:
/// `(stdin)` and `(stdout)` for the standard streams), the operation that failed, and a reason. Its `description`
/// reads `FILE: reason`, which the command line prints after `weir: `.
///
/// The reason is kept in parts (a lead such as `corrupt data`, the detail,
/// where ``frame`` and ``offset`` go) and written out when read: an error
/// made from another takes a part, or keeps the whole as ``cause``, and no
/// code edits or parses text. The words are all in the factories
/// (`WeirError+Factories.swift`) and name no command-line flag: what a
/// caller could change is a ``Hint``, which the command line words in its
/// flags. Equality compares what callers see.
public struct WeirError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What went wrong, as a code a program can compare and switch on
    /// (``Kind``; a switch over it ends in `default:`).
    public var kind: Kind
    /// The file concerned, as the caller named it.
    public var path: String
    /// The operation that failed.
    public var operation: Operation
    /// What a caller could change to succeed, when something could: a fact
    /// the command line words as a hint in its own terms (`use -f to
    /// overwrite it`), which ``reason`` leaves out.
    public var hint: Hint?
    /// The index of the frame the error is in, when it is known.
    public var frame: Int?
    /// The offset in the stream where that frame starts, when it is known.
    public var offset: Int?

    /// What the reason starts with, before `: ` (none: the detail alone).
    private(set) var lead: Lead?
    /// The reason after the lead, without the frame and offset.
    private(set) var detail: String
    /// Where the reason names ``frame`` and ``offset``.
    private(set) var placement: Placement
    /// The cause, when there is one: at most one element (a struct cannot
    /// hold a value of its own type, an array can).
    private var causes: [WeirError]

    /// The error this one was made from, when there is one: the seek table's
    /// read error behind a seek table check that fails, the decoding error
    /// behind the discovery that the file was cut while it was read.
    public var cause: WeirError? {
        get { causes.first }
        set { causes = newValue.map { [$0] } ?? [] }
    }

    /// A human-readable reason, without the path (it names the frame and
    /// offset too, when they are known). Setting it replaces the whole text.
    public var reason: String {
        get { text(withLead: true) }
        set {
            lead = nil
            detail = newValue
            placement = .none
        }
    }

    /// What a caller could change to succeed.
    ///
    /// A struct of codes, as ``Kind`` is: a later version adds hints without
    /// breaking a caller's `switch`, which ends in `default:`. The hints that
    /// carry numbers give them as properties (``windowLog``, ``windowBytes``,
    /// ``fittingLongWindowLog``).
    public struct Hint: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, as its static member is spelled.
        private let name: String
        /// ``windowLimit(log:bytes:)``'s window limit, as a log of 2.
        public let windowLog: Int?
        /// ``windowLimit(log:bytes:)``'s window, in bytes.
        public let windowBytes: UInt64?
        /// ``compressionMemory(longWindowLog:)``'s window that fits.
        public let fittingLongWindowLog: Int?

        private init(_ name: String, windowLog: Int? = nil, windowBytes: UInt64? = nil,
                     fittingLongWindowLog: Int? = nil) {
            self.name = name
            self.windowLog = windowLog
            self.windowBytes = windowBytes
            self.fittingLongWindowLog = fittingLongWindowLog
        }

        /// The code's name (`forceOverwrite`), with its numbers.
        public var description: String {
            let numbers = [windowLog, windowBytes.map { Int(clamping: $0) }, fittingLongWindowLog].compactMap { $0 }
            return numbers.isEmpty ? name : "\(name)(\(numbers.map(String.init).joined(separator: ", ")))"
        }

        /// Whether this is the same hint as `other`, whatever its numbers
        /// (`hint.isKind(of: .windowLimit(log: 0, bytes: 0))`).
        public func isKind(of other: Hint) -> Bool { name == other.name }

        /// Forcing (`force`) replaces the existing output.
        public static let forceOverwrite = Self("forceOverwrite")
        /// Forcing reads the input anyway (a terminal, a device, a socket).
        public static let forceRead = Self("forceRead")
        /// Forcing, or asking for standard output, writes compressed data to the terminal.
        public static let forceTerminalOutput = Self("forceTerminalOutput")
        /// Naming the output, or writing to standard output, does without a name from the suffix.
        public static let nameOutput = Self("nameOutput")
        /// The dictionary the data was compressed with decodes it.
        public static let dictionary = Self("dictionary")
        /// A window limit of `2^log` bytes, at least `bytes`, decodes the frame.
        public static func windowLimit(log: Int, bytes: UInt64) -> Self {
            Self("windowLimit", windowLog: log, windowBytes: bytes)
        }
        /// A larger window limit decodes it (how large is not known).
        public static let raiseWindowLimit = Self("raiseWindowLimit")
        /// Compressing needs more memory than the process may hold: a
        /// window of `2^longWindowLog` bytes fits (nil: none smaller does).
        public static func compressionMemory(longWindowLog: Int?) -> Self {
            Self("compressionMemory", fittingLongWindowLog: longWindowLog)
        }
        /// More samples make a training possible: one file per sample, or
        /// files cut into samples of a fixed size.
        public static let moreSamples = Self("moreSamples")
        /// The same run again goes on from what this one kept (a stopped
        /// compression's `NAME.part`).
        public static let resume = Self("resume")
        /// A member index, added to the file in place, makes the file's
        /// tar members readable one by one.
        public static let addMemberIndex = Self("addMemberIndex")
        /// Decompressing the file and compressing its content again writes
        /// frames that can be read in parts (a tar in one frame: no member index).
        public static let recompress = Self("recompress")

        /// Every hint this version gives (those with numbers, with some), so
        /// that a caller's wording of each can be tested.
        package static let every: [Hint] = [
            .forceOverwrite, .forceRead, .forceTerminalOutput, .nameOutput, .dictionary,
            .windowLimit(log: 20, bytes: 1 << 20), .raiseWindowLimit, .compressionMemory(longWindowLog: 23),
            .compressionMemory(longWindowLog: nil), .moreSamples, .resume, .addMemberIndex, .recompress,
        ]
    }

    /// The first words of a reason, which say what went wrong.
    package enum Lead: Equatable, Sendable {
        case corruptData, corruptSeekTable, truncatedInput
        /// `OPERATION failed`, with the operation the error was made for.
        case failed(Operation)

        var text: String {
            switch self {
            case .corruptData: "corrupt data"
            case .corruptSeekTable: "corrupt seek table"
            case .truncatedInput: "truncated input"
            case .failed(let operation): "\(operation) failed"
            }
        }
    }

    /// Where a reason names ``frame`` and ``offset`` (only when both are known).
    package enum Placement: Equatable, Sendable {
        /// It does not.
        case none
        /// Before the detail: `corrupt data: frame 3 at offset 100 DETAIL`.
        case leading
        /// After it, as the decoder locates a libzstd error: `DETAIL (frame 3, at offset 100)`.
        case trailing
        /// After it, as the frame scanner words it: `DETAIL (frame 3, which starts at offset 100)`.
        case scanned
    }

    /// Creates an error with the given reason, as it is.
    package init(
        _ kind: Kind, path: String, operation: Operation, reason: String, frame: Int? = nil, offset: Int? = nil,
        cause: WeirError? = nil
    ) {
        self.init(kind, path: path, operation: operation, lead: nil, detail: reason, frame: frame, offset: offset,
                  cause: cause)
    }

    /// Creates an error from the parts of its reason (for the factories).
    package init(_ kind: Kind, path: String, operation: Operation, lead: Lead?, detail: String,
         placement: Placement = .none, frame: Int? = nil, offset: Int? = nil, cause: WeirError? = nil,
         hint: Hint? = nil) {
        self.kind = kind
        self.hint = hint
        self.path = path
        self.operation = operation
        self.lead = lead
        self.detail = detail
        self.placement = placement
        self.frame = frame
        self.offset = offset
        self.causes = cause.map { [$0] } ?? []
    }

    /// This error in frame `index`, which starts at `offset`, named where
    /// `placement` puts it; unchanged when it already names a frame.
    package func located(frame index: Int, offset: Int, _ placement: Placement) -> WeirError {
        guard frame == nil else { return self }
        var error = self
        error.frame = index
        error.offset = offset
        error.placement = placement
        return error
    }

    /// What this error says as the problem of a seek table, inside another
    /// message that already begins `corrupt seek table: `: its reason
    /// without that lead.
    package var seekTableProblem: String {
        text(withLead: lead != .corruptSeekTable)
    }

    /// The reason, with or without its lead.
    private func text(withLead: Bool) -> String {
        var text = withLead ? lead.map { "\($0.text): " } ?? "" : ""
        guard let frame, let offset else { return text + detail }
        switch placement {
        case .none: text += detail
        case .leading: text += "frame \(frame) at offset \(offset) \(detail)"
        case .trailing: text += "\(detail) (frame \(frame), at offset \(offset))"
        case .scanned: text += "\(detail) (frame \(frame), which starts at offset \(offset))"
        }
        return text
    }

    /// This failure, after which the partial output `part` is kept, holding
    /// `percent` of the input's work: the reason says so, and the same run
    /// again goes on from there (``Hint/resume``).
    package func keeping(_ part: String, percent: Double) -> WeirError {
        var kept = self
        kept.detail = text(withLead: false) + "; \(FileName.displayed(part)) keeps the first \(Int(percent))%"
        kept.placement = .none
        kept.hint = .resume
        return kept
    }

    /// Equal when callers see the same: kind, path, operation, reason, frame,
    /// offset and cause (not how the reason is put together).
    public static func == (left: WeirError, right: WeirError) -> Bool {
        left.kind == right.kind && left.path == right.path && left.operation == right.operation
            && left.frame == right.frame && left.offset == right.offset && left.reason == right.reason
            && left.cause == right.cause && left.hint == right.hint
    }

    /// `FILE: reason`, as the command line prints it after `weir: `; the
    /// name as `FileName` shows it.
    public var description: String {
        "\(FileName.displayed(path)): \(reason)"
    }

    /// Whether this error means that the downstream of a pipe went away.
    package var isBrokenPipe: Bool {
        kind == .system(errno: EPIPE)
    }
}
