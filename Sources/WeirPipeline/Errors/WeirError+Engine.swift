import WeirSystem

/// The codes of the engine's runs and random access.
extension WeirError.Kind {
    /// The input's size is not the one declared for it (`--stream-size`).
    public static let sizeMismatch = Self("sizeMismatch")
    /// A byte range reaches past the end of the decompressed content.
    public static let outOfRange = Self("outOfRange")
    /// A file given as the content of a compressed file's frames (to index
    /// it without decoding) is not that content, or cannot be checked
    /// against the frames.
    public static let sourceMismatch = Self("sourceMismatch")
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

    // MARK: sourceMismatch

    /// How a file given as the content of `file`'s frames fails to stand for it.
    package enum SourceProblem: Sendable {
        /// The frame of `file` at `index` and `offset` does not declare its
        /// content size or store a content checksum.
        case unchecked(frame: Int, offset: Int, size: Bool)
        /// The source holds `source` bytes, the frames `content`.
        case size(source: Int, content: Int)
        /// The source's bytes `range` do not hash to the checksum the frame
        /// at `index` and `offset` stores.
        case checksum(frame: Int, offset: Int, range: Range<Int>)
    }

    /// `source`, given as the uncompressed content of `file`'s frames for
    /// its member index, is not that content (the error names `source`) or
    /// cannot be checked against them (it names `file`): nothing is appended.
    package static func sourceMismatch(file: String, source: String, _ problem: SourceProblem) -> WeirError {
        let (path, detail): (String, String)
        switch problem {
        case .unchecked(let frame, let offset, let size):
            let missing = size ? "declares no content size" : "stores no content checksum"
            path = file
            detail = "frame \(frame) at offset \(offset) \(missing), so \(FileName.displayed(source)) cannot be "
                + "checked against it as its content; not indexed"
        case .size(let sourceSize, let content):
            path = source
            detail = "is \(sourceSize) bytes, but the frames of \(FileName.displayed(file)) hold \(content) bytes "
                + "of content; not indexed"
        case .checksum(let frame, let offset, let range):
            path = source
            detail = "bytes \(range.lowerBound) to \(range.upperBound) are not the content of frame \(frame) at "
                + "offset \(offset) of \(FileName.displayed(file)) (its content checksum differs); not indexed"
        }
        return WeirError(.sourceMismatch, path: path, operation: .writeMemberIndex, lead: nil, detail: detail)
    }
}
