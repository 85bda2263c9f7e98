extension DecompressionOptions {
    /// The budget that decodes frames of `contentSize` bytes side by side,
    /// one per worker and one waiting for the writer, as the default budget
    /// does 8 MiB frames; held to ``largeFrameBudget``. Nil when the default
    /// budget already holds such a frame, or `memoryLimit` (`-M`) bounds it.
    /// The alternative, streaming every such frame through one decoder,
    /// decoded weir's `-9` files at half the speed (docs/design.md).
    ///
    /// Beside the decoding rather than with the options: it sizes frames'
    /// buffers (`FrameBuffers`, the run's), which the options, below the
    /// run, do not know.
    package func budget(forFrame contentSize: Int) -> Int? {
        guard memoryLimit == nil else { return nil }
        // A frame above the cap gets the cap (it streams): a size a header
        // declares may be near Int.max, and the product below would trap.
        guard contentSize <= largeFrameBudget else { return largeFrameBudget }
        let buffer = FrameBuffers.bufferSize(for: contentSize)
        guard buffer > Self.defaultBudgetPerThread else { return nil }
        return min(largeFrameBudget, (resolvedThreads + 1) * buffer + Self.defaultBudgetPerThread)
    }
}
