package weir.hadoop;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdDecompressCtx;
import com.github.luben.zstd.ZstdException;
import com.github.luben.zstd.ZstdInputStreamNoFinalizer;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import org.apache.hadoop.fs.PositionedReadable;
import org.apache.hadoop.fs.Seekable;
import org.apache.hadoop.io.compress.SplitCompressionInputStream;

/**
 * The content of one split of a seekable zstd file, for Hadoop's LineRecordReader (and Spark's
 * copy of it), which reads records while {@code getPos() <= getAdjustedEnd()} and then one more.
 *
 * <p>Which blocks (frames) a split owns: Spark and Hadoop cut a file into splits of equal
 * compressed bytes, but a file's frames hold the same content in very different compressed sizes
 * (weir's file of the Linux tarball, cut in two, holds 63% of its content in the first half), and
 * a task's time goes with the content it decodes and parses. So each block is placed by where its
 * content starts within the file's content ({@link SeekIndex#contentStarts}), scaled to the
 * file's length, and a split [start, end) owns the blocks placed in it: splits of equal size get
 * equal content. The splits of a file cover [0, length) without overlap, so every block has one
 * owner; the first block is placed at 0, so the split at 0 owns it. Its adjusted start
 * is its first block's offset; its adjusted end is one less than the offset of the next split's
 * first block. {@code getPos()} is the offset of the block that the last byte returned came from,
 * and no read returns bytes of two blocks. So the reader keeps reading while it is inside its own
 * blocks, finishes the line that runs into the next split's first block (its first byte moves
 * {@code getPos()} past the adjusted end) and stops; the next split, whose adjusted start is not 0,
 * drops its first line, which is exactly that one. A line longer than a frame is read by the split
 * in which it starts; the stream goes on into the following blocks as far as that line needs.
 * A split that owns no block returns nothing.
 *
 * <p>Blocks are decoded with zstd-jni: a split's own blocks at once when the table gives a content
 * size up to {@link #ONE_SHOT_LIMIT}; streaming otherwise (a region no table lists, huge frames)
 * and past the split's own blocks, where only the rest of a line is wanted. A one-shot
 * block is read whole into a direct buffer and decoded into another: no JNI critical section on a
 * Java array, which would hold off the collector, and so the executor's other tasks, for the whole
 * frame's decoding. The two buffers are reused from block to block and, through
 * {@link DirectBuffers}, from task to task. zstd checks each frame's content checksum; a damaged
 * block fails with its file offset.
 */
final class FrameSplitInputStream extends SplitCompressionInputStream {
    /** Blocks up to this content size are decoded in one call (64 MiB: weir's frames up to -19). */
    static final long ONE_SHOT_LIMIT = 64L << 20;
    /** Bytes per read from the file into a block's direct buffer. */
    static final int CHUNK = 1 << 20;

    private final SeekIndex index;
    private final InputStream file;
    private final String name;
    private int next;          // the next block to open
    private final int owned;   // the first block past this split's own
    private long blockOffset;  // getPos(): the block of the last byte returned
    private ByteBuffer content;     // a one-shot block's content, direct; position: the next byte to return
    private InputStream stream;     // a streaming block's decoder, or null
    private ByteBuffer compressed;  // a one-shot block's frame, direct
    private byte[] chunk;           // bytes on their way from the file to {@code compressed}
    private ZstdDecompressCtx ctx;

    FrameSplitInputStream(InputStream in, String name, SeekIndex index, long start, long end) throws IOException {
        super(in, start, end);
        this.file = in;
        this.name = name;
        this.index = index;
        int n = index.count();
        int first = index.firstPlacedAtOrAfter(start);
        int after = Math.max(first, index.firstPlacedAtOrAfter(end));
        owned = after;
        long nextOwned = after < n ? index.offsets[after] : index.dataEnd();
        if (first == after) {  // no block starts here: an empty split
            setStart(nextOwned);
            setEnd(nextOwned);
            next = n;
            blockOffset = nextOwned;
        } else {
            setStart(index.offsets[first]);
            setEnd(nextOwned - 1);
            next = first;
            blockOffset = index.offsets[first];
        }
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n <= 0 ? -1 : one[0] & 0xFF;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        while (true) {
            if (content != null && content.hasRemaining()) {
                int n = Math.min(len, content.remaining());
                content.get(b, off, n);
                blockOffset = index.offsets[next - 1];
                return n;
            }
            if (stream != null) {
                int n;
                try {
                    n = stream.read(b, off, len);
                } catch (IOException | RuntimeException e) {
                    throw damaged(next - 1, e);
                }
                if (n > 0) {
                    blockOffset = index.offsets[next - 1];
                    return n;
                }
                stream.close();
                stream = null;
            }
            if (next >= index.count()) {
                return -1;
            }
            open(next++);
        }
    }

    /** Makes block {@code i}'s content the next to return. */
    private void open(int i) throws IOException {
        long offset = index.offsets[i];
        long size = index.sizes[i];
        long contentSize = index.contentSizes[i];
        ((Seekable) file).seek(offset);
        if (i < owned && contentSize >= 0 && contentSize <= ONE_SHOT_LIMIT && size <= ONE_SHOT_LIMIT) {
            compressed = room(compressed, (int) size);
            readFully(compressed, (int) size, i);
            content = room(content, (int) contentSize);
            if (ctx == null) {
                ctx = new ZstdDecompressCtx();
            }
            // A header's size beats the table: a table that disagrees is refused.
            long declared = declaredContentSize(compressed, (int) size);
            if (declared >= 0 && declared != contentSize) {
                throw tableMismatch(i, "the frame declares " + declared);
            }
            int got;
            try {
                got = ctx.decompressDirectByteBuffer(content, 0, (int) contentSize, compressed, 0, (int) size);
            } catch (ZstdException e) {
                if (e.getErrorCode() == Zstd.errDstSizeTooSmall()) {
                    throw tableMismatch(i, "the frame decodes to more");
                }
                throw damaged(i, e);
            }
            if (got != contentSize) {
                throw tableMismatch(i, "the frame decodes to " + got);
            }
            content.limit(got);
        } else {
            if (content != null) {
                content.limit(0);
            }
            stream = new ZstdInputStreamNoFinalizer(new BoundedStream(file, size));
        }
    }

    /** {@code buffer}, or a larger one from {@link DirectBuffers}, cleared, with room for {@code size} bytes. */
    private static ByteBuffer room(ByteBuffer buffer, int size) {
        if (buffer != null && buffer.capacity() >= size) {
            return buffer.clear();
        }
        DirectBuffers.give(buffer);
        return DirectBuffers.take(size);
    }

    /** Reads the next {@code size} bytes of the file into {@code buffer}, from its start. */
    private void readFully(ByteBuffer buffer, int size, int block) throws IOException {
        if (chunk == null) {
            chunk = new byte[CHUNK];
        }
        buffer.clear();
        int left = size;
        while (left > 0) {
            int n = file.read(chunk, 0, Math.min(CHUNK, left));
            if (n < 0) {
                throw damaged(block, new EOFException("the file ends inside the block"));
            }
            buffer.put(chunk, 0, n);
            left -= n;
        }
        buffer.flip();
    }

    /**
     * The content size the header of the zstd frame at the start of {@code frame} declares; -1 when
     * it declares none, or the bytes are not a zstd frame header (decoding then says why).
     */
    static long declaredContentSize(ByteBuffer frame, int size) {
        if (size < 6 || (frame.get(0) & 0xFF) != 0x28 || (frame.get(1) & 0xFF) != 0xB5
                || (frame.get(2) & 0xFF) != 0x2F || (frame.get(3) & 0xFF) != 0xFD) {
            return -1;
        }
        int descriptor = frame.get(4) & 0xFF;
        int fcsFlag = descriptor >>> 6;
        boolean singleSegment = (descriptor & 0x20) != 0;
        int fcsBytes = new int[] {singleSegment ? 1 : 0, 2, 4, 8}[fcsFlag];
        int at = 5 + (singleSegment ? 0 : 1) + new int[] {0, 1, 2, 4}[descriptor & 3];
        if (fcsBytes == 0 || at + fcsBytes > size) {
            return -1;
        }
        long value = 0;
        for (int k = fcsBytes - 1; k >= 0; k--) {
            value = value << 8 | (frame.get(at + k) & 0xFF);
        }
        return fcsBytes == 2 ? value + 256 : value;
    }

    /** The seek table's entry for block {@code i} does not match its frame: {@code what} the frame says. */
    private IOException tableMismatch(int i, String what) {
        return new IOException("weir-hadoop: " + name + ": the seek table does not match the frames: block " + i
                + " of " + index.count() + " lists " + index.contentSizes[i] + " bytes of content, but " + what
                + " (the zstd frame at offset " + index.offsets[i] + ")");
    }

    private IOException damaged(int block, Exception cause) {
        long offset = index.offsets[block];
        return new IOException("weir-hadoop: " + name + ": the zstd frame at offset " + offset
                + " (" + index.sizes[block] + " bytes, block " + block + " of " + index.count()
                + ") cannot be decoded: " + cause.getMessage(), cause);
    }

    @Override
    public long getPos() {
        return blockOffset;
    }

    @Override
    public void resetState() {
        // Nothing to reset: blocks are independent.
    }

    @Override
    public void close() throws IOException {
        try {
            if (stream != null) {
                stream.close();
            }
            if (ctx != null) {
                ctx.close();
                ctx = null;
            }
            DirectBuffers.give(content);
            DirectBuffers.give(compressed);
            content = null;
            compressed = null;
        } finally {
            super.close();
        }
    }

    /** The next {@code remaining} bytes of a stream, for a streaming decoder that reads ahead. */
    private static final class BoundedStream extends InputStream {
        private final InputStream in;
        private long remaining;

        BoundedStream(InputStream in, long remaining) {
            this.in = in;
            this.remaining = remaining;
        }

        @Override
        public int read() throws IOException {
            if (remaining <= 0) {
                return -1;
            }
            int c = in.read();
            if (c >= 0) {
                remaining--;
            }
            return c;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (remaining <= 0) {
                return -1;
            }
            int n = in.read(b, off, (int) Math.min(len, remaining));
            if (n > 0) {
                remaining -= n;
            }
            return n;
        }

        @Override
        public void close() {
            // The file is the split stream's to close.
        }
    }
}
