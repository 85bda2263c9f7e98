import WeirSystem

/// The codes of the engine's runs and random access.
extension WeirError.Kind {
    /// The input's size is not the one declared for it (`--stream-size`).
    public static let sizeMismatch = Self("sizeMismatch")
    /// A byte range reaches past the end of the decompressed content.
    public static let outOfRange = Self("outOfRange")
}

/// The factories of the engine's codes, worded as ``WeirError``'s others.
extension WeirError {
    // MARK: sizeMismatch

    /// An input of `actual` bytes where its size was declared `declared`.
    package static func sizeMismatch(path: String, operation: Operation, actual: Int, declared: Int) -> WeirError {
        WeirError(.sizeMismatch, path: path, operation: operation, lead: nil,
                  detail: "the input is \(actual) bytes, not the \(declared) declared")
    }

    // MARK: outOfRange

    /// A range of the content that ends past its `size` bytes.
    package static func outOfRange(path: String, range: Range<Int>, size: Int) -> WeirError {
        let which = range.lowerBound > size ? "starts" : "ends"
        return WeirError(
            .outOfRange, path: path, operation: .read, lead: nil,
            detail: "the range \(range.lowerBound):\(range.upperBound) \(which) past the end of the content "
                + "(\(size) bytes)")
    }
}
