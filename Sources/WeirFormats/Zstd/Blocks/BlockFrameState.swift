import CZstdSplit

/// A ``BlockFrame`` between two blocks, all that decoding from the next
/// block on needs beside the frame's last window of content (issue 81,
/// item 6: `weir mount` reads one large frame anywhere): the scan's state
/// (the header, the last table descriptions a repeat mode reuses; zsplit.h,
/// zs_frame_save), and phase 2's (bytes produced, the repeat offsets).
///
/// Valid only in the process that saved it: the table descriptions carry
/// numbers unique in the process, by which phase 1 keeps the tables it built.
package struct BlockFrameState: Sendable {
    /// zs_frame_save's bytes.
    let scan: [UInt8]
    let exec: zs_exec
    let header: zs_frame_header

    /// The frame's content before the next block.
    package var produced: Int { Int(exec.produced) }

    /// The window's bytes a restore needs before the next block: the
    /// content's last min(produced, Window_Size) bytes.
    package var windowCount: Int { Int(min(exec.produced, header.window_size)) }
}
