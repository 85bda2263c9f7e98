import WeirSystem

/// The members of a tar stream that `--member` patterns select, picked as
/// the stream passes (`cat a.tar.zst | weir -d --member=X`): no index, one
/// pass, the members' bytes handed on as they stand — their header blocks
/// (pax `x`/`g`, GNU `L`/`K`, the member's own, an old GNU sparse header's
/// extension blocks), data and padding — without tar's end blocks (the
/// caller writes them).
///
/// A member's name is the one `tar tf` prints: a pax `GNU.sparse.name` or
/// `path` record, a GNU
/// long name, else the ustar prefix and name; its data runs for its size
/// (a pax `size` record, else the header's) rounded to 512 bytes, except
/// for links, devices, folders and FIFOs, which have none. A header block
/// whose checksum fails stops the stream with its offset; so does a stream
/// that ends inside a member.
///
/// A hard link whose target went by unselected cannot bring it back: it is
/// named in ``missedLinkTargets`` (tar x then cannot make the link).
package struct TarStreamFilter {
    package static let block = TarHeaderCheck.block

    private enum State {
        /// Gathering a header block (in `partial`).
        case header
        /// Gathering the data of an extended header (pax, GNU long name),
        /// `remaining` bytes of blocks left.
        case extended(remaining: Int)
        /// An old GNU sparse header's extension blocks, one more to come.
        case sparseExtension
        /// A member's data and padding: `remaining` bytes, handed on when `keep`.
        case data(remaining: Int, keep: Bool)
        /// The first end block was seen: the rest is ignored.
        case ended
    }

    package let patterns: [TarMemberPattern]
    private var state = State.header
    /// The header blocks of the member being read, until it is decided.
    private var headers: [UInt8] = []
    /// A block being gathered across pieces.
    private var partial: [UInt8] = []
    /// The name and size the extended headers gave the member being read.
    private var longName: [UInt8]?
    private var paxPath: [UInt8]?
    private var paxSize: Int?
    /// The member being read: whether it is kept, and its data's length.
    private var pendingKeep = false
    private var pendingData = 0
    /// Where in the content the next byte is.
    package private(set) var offset = 0
    /// Whether each pattern matched a member.
    private var matched: [Bool]
    /// The names of the members kept (for hard links' targets).
    private var keptNames: Set<[UInt8]> = []
    /// The members handed on.
    package private(set) var members = 0
    /// Hard links kept whose target was not.
    package private(set) var missedLinkTargets: [[UInt8]] = []
    /// The name of the stream, for errors.
    package let path: String

    package init(patterns: [TarMemberPattern], path: String) {
        self.patterns = patterns
        self.path = path
        matched = [Bool](repeating: false, count: patterns.count)
    }

    /// The patterns that matched no member so far.
    package var unmatched: [TarMemberPattern] { patterns.indices.filter { !matched[$0] }.map { patterns[$0] } }

    /// Whether the stream ended where a tar may end: after its end block,
    /// or between members (tar accepts a missing end).
    package var endsWell: Bool {
        switch state {
        case .ended: true
        case .header: partial.isEmpty && headers.isEmpty
        default: false
        }
    }

    /// Reads `piece`, the next bytes of the content, handing `emit` what
    /// of them is kept.
    package mutating func consume(_ piece: UnsafeRawBufferPointer,
                                  _ emit: (UnsafeRawBufferPointer) throws(WeirError) -> Void) throws(WeirError) {
        var at = 0
        while at < piece.count {
            switch state {
            case .ended:
                offset += piece.count - at
                return
            case .data(let remaining, let keep):
                let taken = min(remaining, piece.count - at)
                if keep { try emit(UnsafeRawBufferPointer(rebasing: piece[at ..< at + taken])) }
                at += taken
                offset += taken
                state = remaining == taken ? .header : .data(remaining: remaining - taken, keep: keep)
            case .header, .extended, .sparseExtension:
                let taken = min(Self.block - partial.count, piece.count - at)
                partial.append(contentsOf: piece[at ..< at + taken])
                at += taken
                offset += taken
                if partial.count == Self.block {
                    let block = partial
                    partial.removeAll(keepingCapacity: true)
                    try take(block, emit)
                }
            }
        }
    }

    /// One whole block in a header state.
    private mutating func take(_ block: [UInt8],
                               _ emit: (UnsafeRawBufferPointer) throws(WeirError) -> Void) throws(WeirError) {
        let blockOffset = offset - Self.block
        switch state {
        case .extended(let remaining):
            headers += block
            state = remaining > Self.block ? .extended(remaining: remaining - Self.block) : .header
            if case .header = state { readExtended() }
            return
        case .sparseExtension:
            headers += block
            if block[504] == 0 { try decide(emit) }
            return
        default: break
        }
        if headers.isEmpty, block.allSatisfy({ $0 == 0 }) {
            state = .ended
            return
        }
        let valid = block.withUnsafeBytes { TarHeaderCheck.checksumMatches($0) }
        guard valid else {
            throw WeirError.notTar(path: path, operation: .decompress, at: blockOffset)
        }
        headers += block
        let type = block[156]
        let size = block.withUnsafeBytes { TarHeaderCheck.number(UnsafeRawBufferPointer(rebasing: $0[124 ..< 136])) }
        if [UInt8(ascii: "x"), UInt8(ascii: "g"), UInt8(ascii: "X"), UInt8(ascii: "L"), UInt8(ascii: "K")]
            .contains(type) {
            guard let size else { throw WeirError.notTar(path: path, operation: .decompress, at: blockOffset) }
            state = size == 0 ? .header : .extended(remaining: (size + Self.block - 1) / Self.block * Self.block)
            extendedType = type
            extendedSize = size
            extendedStart = headers.count
            if size == 0 { readExtended() }
            return
        }
        let name = longName ?? paxPath ?? block.withUnsafeBytes { TarHeaderCheck.ustarName($0) }
        let noData: [UInt8] = Array("123456".utf8)
        let stored = noData.contains(type) ? 0 : paxSize ?? size ?? 0
        pendingData = (stored + Self.block - 1) / Self.block * Self.block
        pendingKeep = false
        for (index, pattern) in patterns.enumerated() where pattern.matches(name) {
            matched[index] = true
            pendingKeep = true
        }
        if pendingKeep {
            keptNames.insert(name)
            if type == UInt8(ascii: "1") {
                let target = block.withUnsafeBytes { Array($0[157 ..< 257].prefix { $0 != 0 }) }
                let link = linkName ?? target
                if !keptNames.contains(link) { missedLinkTargets.append(link) }
            }
        }
        if type == UInt8(ascii: "S"), block[482] != 0 {
            state = .sparseExtension
            return
        }
        try decide(emit)
    }

    private var extendedType: UInt8 = 0
    private var extendedSize = 0
    private var extendedStart = 0
    private var linkName: [UInt8]?

    /// The extended header just read: its name, link or size.
    private mutating func readExtended() {
        let data = Array(headers[extendedStart ..< extendedStart + extendedSize])
        switch extendedType {
        case UInt8(ascii: "L"): longName = Array(data.prefix { $0 != 0 })
        case UInt8(ascii: "K"): linkName = Array(data.prefix { $0 != 0 })
        case UInt8(ascii: "x"), UInt8(ascii: "X"):
            data.withUnsafeBytes { all in
                // A pax sparse member's real name is GNU.sparse.name (its path is GNU's stand-in).
                if let path = TarHeaderCheck.paxRecord(in: all, key: Array("GNU.sparse.name".utf8))
                    ?? TarHeaderCheck.paxRecord(in: all, key: Array("path".utf8)) {
                    paxPath = path
                }
                if let link = TarHeaderCheck.paxRecord(in: all, key: Array("linkpath".utf8)) { linkName = link }
                if let size = TarHeaderCheck.paxRecord(in: all, key: Array("size".utf8)),
                   let value = Int(String(decoding: size, as: UTF8.self)) {
                    paxSize = value
                }
            }
        default: break
        }
    }

    /// The member's header blocks are all read: handed on if kept, then its data.
    private mutating func decide(_ emit: (UnsafeRawBufferPointer) throws(WeirError) -> Void) throws(WeirError) {
        if pendingKeep {
            members += 1
            try headers.withUnsafeBytes { all in Result { () throws(WeirError) in try emit(all) } }.get()
        }
        headers.removeAll(keepingCapacity: true)
        longName = nil
        paxPath = nil
        paxSize = nil
        linkName = nil
        state = pendingData == 0 ? .header : .data(remaining: pendingData, keep: pendingKeep)
    }
}
