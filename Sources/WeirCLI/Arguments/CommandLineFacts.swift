/// What a zstd command line says that swift-argument-parser has no way to
/// read, as ``ArgumentNormalizer`` found it. The parsed command takes these
/// beside what the parser read: one grammar, and no hidden flags carrying
/// them through the parser.
package struct CommandLineFacts: Equatable, Sendable {
    /// A short `-d` together with `-b`, in either order: the benchmark
    /// decodes the files only, as zstd's `-b -d` (a long `--decompress` is
    /// the operation, as in zstd).
    package var benchmarkDecodes = false
    /// The lists of `--train-cover=LIST`, in the order given (`k=0` for the
    /// flag alone: a list starts from zeros); the last is used, every one
    /// checked, as zstd checks each it reads.
    package var coverLists: [String] = []
    /// The same for `--train-fastcover=LIST`.
    package var fastCoverLists: [String] = []
    /// The same for `--train-legacy=LIST` and `-sN` (as `s=N`); the flag
    /// alone adds none: it keeps the selectivity given before.
    package var legacyLists: [String] = []
    /// The lists of `--adapt=LIST` (`min=N,max=N`), in the order given;
    /// each one is read over the ones before, as zstd reads them.
    package var adaptLists: [String] = []
    /// `--progress=json`: the progress as JSON records, not a drawn line.
    package var progressJSON = false

    package init(benchmarkDecodes: Bool = false, coverLists: [String] = [], fastCoverLists: [String] = [],
                 legacyLists: [String] = []) {
        self.benchmarkDecodes = benchmarkDecodes
        self.coverLists = coverLists
        self.fastCoverLists = fastCoverLists
        self.legacyLists = legacyLists
    }
}
