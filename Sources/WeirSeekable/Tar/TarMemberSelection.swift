import WeirSystem
import WeirTar
/// The members of an archive that `--member` patterns select, in archive
/// order, as `tar x PATTERN...` selects them (`TarMemberPattern`), and the
/// patterns that matched nothing (tar's "Not found in archive").
///
/// A hard link selected brings the member it links to — the last member of
/// that name before it, which holds the data — when no pattern selected it:
/// `tar x` cannot make the link without it. A link whose target comes only
/// after it (no member of that name before it) cannot be made by `tar x`,
/// from these members or from the whole archive: it is kept, and the
/// command names it in a warning.
public struct TarMemberSelection: Sendable, Equatable {
    /// A hard link selected whose target comes after it in the archive.
    package struct LinkToLater: Sendable, Equatable {
        /// The link's path and the path it links to.
        package var path: [UInt8], target: [UInt8]
    }

    /// The members selected, in archive order.
    public let members: [TarMember]
    /// The patterns that matched no member, in the order given.
    public let unmatched: [TarMemberPattern]
    /// The hard links selected whose target no member before them holds.
    package private(set) var linksToLaterMembers: [LinkToLater] = []

    /// The members of `members` (in archive order) that `patterns` select.
    public init(members: [TarMember], patterns: [TarMemberPattern]) {
        self.init(list: members, patterns: patterns)
    }

    /// The members of an archive's `records` that `patterns` select.
    package init(records: [MemberIndex.Member], patterns: [TarMemberPattern]) {
        self.init(list: TarMember.list(records), patterns: patterns)
    }

    /// The members of an archive's record list that `patterns` select,
    /// walked once: only the members selected are kept as values. A hard
    /// link among them sends it to the whole list, where its target is.
    /// `found` is told where each member selected lies in the content as
    /// the walk meets it.
    ///
    /// - Throws: what walking `records` throws.
    package init(records: MemberIndex.Records, patterns: [TarMemberPattern],
                 found: (Range<Int>) -> Void = { _ in }) throws(WeirError) {
        var kept: [TarMember] = []
        var matched = [Bool](repeating: false, count: patterns.count)
        var position = 0, links = false, previousEnd = 0
        try records.forEachRecord { record in
            if Self.match(record.path, patterns, &matched) {
                let member = TarMember(record.member(), position: position, previousEnd: previousEnd)
                found(member.contentRange)
                kept.append(member)
                links = links || record.type == UInt8(ascii: "1")
            }
            position += 1
            previousEnd = record.end
        }
        if links {
            self.init(records: try records.members(), patterns: patterns)
        } else {
            self.init(members: kept, unmatched: patterns.indices.filter { !matched[$0] }.map { patterns[$0] })
        }
    }

    private init(members: [TarMember], unmatched: [TarMemberPattern]) {
        self.members = members
        self.unmatched = unmatched
    }

    /// Whether any of `patterns` selects `path`; each that does is marked in `matched`.
    private static func match(_ path: [UInt8], _ patterns: [TarMemberPattern], _ matched: inout [Bool]) -> Bool {
        path.withUnsafeBytes { match($0, patterns, &matched) }
    }

    /// Whether any of `patterns` selects `path`; each that does is marked in `matched`.
    private static func match(_ path: UnsafeRawBufferPointer, _ patterns: [TarMemberPattern],
                              _ matched: inout [Bool]) -> Bool {
        var any = false
        // By index, each pattern borrowed: asked of every member of an archive.
        for index in patterns.indices where patterns[index].matches(path) {
            any = true
            matched[index] = true
        }
        return any
    }

    /// The members of `list` (in archive order) that `patterns` select.
    private init(list: [TarMember], patterns: [TarMemberPattern]) {
        let members = list.map(\.record)
        var chosen = [Bool](repeating: false, count: members.count)
        var matched = [Bool](repeating: false, count: patterns.count)
        for (position, member) in members.enumerated() where Self.match(member.path, patterns, &matched) {
            chosen[position] = true
        }
        // Hard links' targets; a target is before its link, so visited later (a link to a link, as some
        // tars write, brings its own target too).
        let link = UInt8(ascii: "1")
        if members.indices.contains(where: { chosen[$0] && members[$0].type == link }) {
            var positions: [[UInt8]: [Int]] = [:]
            for (position, member) in members.enumerated() { positions[member.path, default: []].append(position) }
            for position in members.indices.reversed() where chosen[position] && members[position].type == link {
                if let target = positions[members[position].link]?.last(where: { $0 < position }) {
                    chosen[target] = true
                } else {
                    let member = members[position]
                    linksToLaterMembers.append(LinkToLater(path: member.path, target: member.link))
                }
            }
            linksToLaterMembers.reverse()
        }
        self.members = list.indices.filter { chosen[$0] }.map { list[$0] }
        unmatched = patterns.indices.filter { !matched[$0] }.map { patterns[$0] }
    }
}
