import Testing
import WeirSystem
@testable import WeirTar
@testable import WeirTarTestSupport
@testable import WeirTestSupport

@Suite("Tar stream filter")
struct TarStreamFilterTests {
    /// Filters `tar` handed over in pieces of `size` bytes.
    static func filter(_ tar: [UInt8], _ patterns: [String], pieces size: Int) throws(WeirError)
        -> (bytes: [UInt8], filter: TarStreamFilter) {
        var filter = TarStreamFilter(patterns: patterns.map { TarMemberPattern($0) }, path: "t")
        var kept: [UInt8] = []
        var from = 0
        while from < tar.count {
            let to = min(tar.count, from + size)
            try tar[from ..< to].withUnsafeBytes { piece in
                Result { () throws(WeirError) in try filter.consume(piece) { kept.append(contentsOf: $0) } }
            }.get()
            from = to
        }
        return (kept, filter)
    }

    @Test("picks the members as the stream passes, their pax headers included, whatever the pieces")
    func picks() throws {
        let (tar, members) = try TestTar.paxFolder(b: TestData.text(3000))
        for size in [1, 7, 512, 1000, tar.count] {
            let (kept, filter) = try Self.filter(tar, ["d/b*", "none"], pieces: size)
            #expect(kept == Array(tar[members[2].headerOffset ..< members[2].end]), "pieces of \(size)")
            #expect(filter.members == 1 && filter.unmatched == [TarMemberPattern("none")] && filter.endsWell)
            let all = try Self.filter(tar, ["d"], pieces: size)
            #expect(all.bytes == Array(tar[0 ..< members[2].end]))
        }
        // Cut inside a member: the stream does not end well.
        let cut = try Self.filter(Array(tar[0 ..< members[2].dataOffset + 100]), ["d"], pieces: 4096)
        #expect(!cut.filter.endsWell)
    }

    @Test("a block that is not a tar header stops the stream with its offset")
    func refusesNonTar() throws {
        let (tar, members) = try TestTar.paxFolder(b: TestData.text(3000))
        var damaged = tar
        let own = members[1].dataOffset - 512  // the member's own header, after its pax blocks
        damaged[own + 5] ^= 0x20
        do throws(WeirError) {
            _ = try Self.filter(damaged, ["d"], pieces: 100)
            Issue.record("filtered")
        } catch {
            #expect(error.kind == .notTar && error.reason.contains("past offset \(own)"),
                    "\(error)")
        }
    }
}
