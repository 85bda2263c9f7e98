/// One change of the compression level under `--adapt`
/// (``CompressionOptions/adaptiveLevels``): the frames from
/// ``inputOffset`` on are compressed at ``to`` instead of ``from``.
public struct LevelChange: Sendable, Equatable {
    /// The level of the frames before.
    public var from: Int
    /// The level of the frames from ``inputOffset`` on.
    public var to: Int
    /// The input offset of the first frame at the new level.
    public var inputOffset: Int
    /// Seconds since the run started.
    public var seconds: Double

    /// Creates a change (for tests and renderers fed by hand).
    public init(from: Int, to: Int, inputOffset: Int, seconds: Double) {
        self.from = from
        self.to = to
        self.inputOffset = inputOffset
        self.seconds = seconds
    }

    /// Whether the new level compresses less (faster): the workers were
    /// the bottleneck.
    public var isLighter: Bool { to < from }
}
