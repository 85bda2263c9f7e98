import CZstd
import WeirSystem

/// libzstd's compression parameters beyond the level, as zstd's `--zstd=`
/// and `--[no-]compress-literals` set them: each one left nil keeps what
/// the level chooses. Applied to every frame's context after the level.
public struct CompressionParameters: Sendable, Equatable {
    /// `ZSTD_c_windowLog` (`wlog`).
    public var windowLog: Int?
    /// `ZSTD_c_chainLog` (`clog`).
    public var chainLog: Int?
    /// `ZSTD_c_hashLog` (`hlog`).
    public var hashLog: Int?
    /// `ZSTD_c_searchLog` (`slog`).
    public var searchLog: Int?
    /// `ZSTD_c_minMatch` (`mml`).
    public var minMatch: Int?
    /// `ZSTD_c_targetLength` (`tlen`).
    public var targetLength: Int?
    /// `ZSTD_c_strategy` (`strat`): 1 (fast) to 9 (btultra2).
    public var strategy: Int?
    /// `ZSTD_c_ldmHashLog` (`lhlog`), with long-distance matching.
    public var ldmHashLog: Int?
    /// `ZSTD_c_ldmMinMatch` (`lmml`).
    public var ldmMinMatch: Int?
    /// `ZSTD_c_ldmBucketSizeLog` (`lblog`).
    public var ldmBucketSizeLog: Int?
    /// `ZSTD_c_ldmHashRateLog` (`lhrlog`).
    public var ldmHashRateLog: Int?
    /// Whether literals are Huffman-compressed: true always, false never
    /// (`ZSTD_c_literalCompressionMode`); nil as the level decides.
    public var compressLiterals: Bool?
    /// Whether the greedy, lazy and lazy2 strategies use the row-based match
    /// finder: true always, false never (`ZSTD_c_useRowMatchFinder`); nil
    /// as libzstd decides (by window size and CPU).
    public var useRowMatchFinder: Bool?
    /// The compressed size blocks aim at, 64 to 131072 bytes
    /// (`ZSTD_c_targetCBlockSize`): smaller blocks let a streaming reader
    /// start sooner, at some cost in ratio. nil: no target (full blocks).
    public var targetCompressedBlockSize: Int?

    /// No parameter set: the level decides everything.
    public init() {}

    /// Whether nothing is set.
    package var isEmpty: Bool { self == CompressionParameters() }

    /// The parameters libzstd chooses for `level`, an input of `size`
    /// bytes (nil: unknown) and a dictionary of `dictionarySize` bytes
    /// (`ZSTD_getCParams`), with the ones set here put over them.
    package func resolved(
        level: Int, size: Int?, dictionarySize: Int = 0
    ) -> (
        windowLog: Int, chainLog: Int, hashLog: Int,
        searchLog: Int, minMatch: Int,
        targetLength: Int, strategy: Int
    ) {
        let base = ZSTD_getCParams(Int32(level), size.map { UInt64($0) } ?? ZSTD_CONTENTSIZE_UNKNOWN, dictionarySize)
        return (windowLog ?? Int(base.windowLog), chainLog ?? Int(base.chainLog), hashLog ?? Int(base.hashLog),
                searchLog ?? Int(base.searchLog), minMatch ?? Int(base.minMatch),
                targetLength ?? Int(base.targetLength), strategy ?? Int(base.strategy.rawValue))
    }

    /// zstd's name of strategy `value` (`ZSTD_fast` … `ZSTD_btultra2`).
    package static func strategyName(_ value: Int) -> String {
        let names = ["ZSTD_fast", "ZSTD_dfast", "ZSTD_greedy", "ZSTD_lazy", "ZSTD_lazy2", "ZSTD_btlazy2", "ZSTD_btopt",
                     "ZSTD_btultra", "ZSTD_btultra2"]
        return (1 ... names.count).contains(value) ? names[value - 1] : "unknown"
    }

    /// Each parameter set, with the libzstd parameter it goes to and its name
    /// for messages.
    var settings: [(parameter: ZSTD_cParameter, name: String, value: Int)] {
        let all: [(ZSTD_cParameter, String, Int?)] = [
            (ZSTD_c_windowLog, "windowLog", windowLog), (ZSTD_c_chainLog, "chainLog", chainLog),
            (ZSTD_c_hashLog, "hashLog", hashLog), (ZSTD_c_searchLog, "searchLog", searchLog),
            (ZSTD_c_minMatch, "minMatch", minMatch), (ZSTD_c_targetLength, "targetLength", targetLength),
            (ZSTD_c_strategy, "strategy", strategy), (ZSTD_c_ldmHashLog, "ldmHashLog", ldmHashLog),
            (ZSTD_c_ldmMinMatch, "ldmMinMatch", ldmMinMatch),
            (ZSTD_c_ldmBucketSizeLog, "ldmBucketSizeLog", ldmBucketSizeLog),
            (ZSTD_c_ldmHashRateLog, "ldmHashRateLog", ldmHashRateLog),
            (weir_c_literalCompressionMode, "literal compression",
             compressLiterals.map { Int(($0 ? ZSTD_ps_enable : ZSTD_ps_disable).rawValue) }),
            (weir_c_useRowMatchFinder, "row match finder",
             useRowMatchFinder.map { Int(($0 ? ZSTD_ps_enable : ZSTD_ps_disable).rawValue) }),
            (weir_c_targetCBlockSize, "targetCBlockSize", targetCompressedBlockSize),
        ]
        return all.compactMap { parameter, name, value in value.map { (parameter, name, $0) } }
    }

    /// Refuses a value outside libzstd's bounds for its parameter.
    ///
    /// - Throws: ``WeirError`` `.library` naming the parameter, its value
    ///   and the bounds.
    package func validate() throws(WeirError) {
        for setting in settings {
            let bounds = ZSTD_cParam_getBounds(setting.parameter)
            guard ZSTD_isError(bounds.error) == 0 else { continue }
            guard (Int(bounds.lowerBound) ... Int(bounds.upperBound)).contains(setting.value) else {
                throw WeirError.library(path: "compression parameters", operation: .setParameter("set \(setting.name)"),
                                        "\(setting.name)=\(setting.value) is out of bounds "
                                            + "(\(bounds.lowerBound) to \(bounds.upperBound))")
            }
        }
    }
}
