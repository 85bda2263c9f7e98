package weir.hadoop;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import org.apache.hadoop.io.compress.CompressionOutputStream;

/**
 * Writes a seekable zstd file, as weir does: the content cut into frames of {@code frameSize}
 * bytes, each an independent zstd frame with its content size and checksum, then one seek table
 * listing every frame with its checksum (the frame's own, the low 32 bits of XXH64). zstd -d,
 * weir -d --range and every reader of zstd's seekable format read it.
 *
 * <p>Memory: one frame of content and its compressed bound. {@link #finish()} ends a part (an
 * empty content is one empty frame, as weir writes); writing after {@link #resetState()} starts a
 * new part, whose table chains after the previous one's.
 */
final class SeekableOutputStream extends CompressionOutputStream {
    private final int level;
    private final byte[] frame;
    private int filled;
    private byte[] compressed = new byte[0];
    private ZstdCompressCtx ctx;
    private final ByteArrayOutputStream table = new ByteArrayOutputStream();
    private int frames;
    private boolean finished;

    SeekableOutputStream(OutputStream out, int level, int frameSize) {
        super(out);
        this.level = level;
        this.frame = new byte[frameSize];
    }

    @Override
    public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        if (finished) {
            resetState();
        }
        while (len > 0) {
            int n = Math.min(len, frame.length - filled);
            System.arraycopy(b, off, frame, filled, n);
            filled += n;
            off += n;
            len -= n;
            if (filled == frame.length) {
                writeFrame();
            }
        }
    }

    private void writeFrame() throws IOException {
        if (ctx == null) {
            ctx = new ZstdCompressCtx().setLevel(level).setChecksum(true).setContentSize(true);
        }
        int bound = (int) Zstd.compressBound(filled);
        if (compressed.length < bound) {
            compressed = new byte[bound];
        }
        int size;
        try {
            size = ctx.compressByteArray(compressed, 0, compressed.length, frame, 0, filled);
        } catch (ZstdException e) {
            throw new IOException("weir-hadoop: compressing frame " + frames + ": " + e.getMessage(), e);
        }
        out.write(compressed, 0, size);
        entry(size);
        entry(filled);
        // The frame's last 4 bytes are its content checksum: the table's checksum of the frame.
        table.write(compressed, size - 4, 4);
        frames++;
        filled = 0;
    }

    private void entry(int value) {
        table.write(value);
        table.write(value >>> 8);
        table.write(value >>> 16);
        table.write(value >>> 24);
    }

    @Override
    public void finish() throws IOException {
        if (finished) {
            return;
        }
        if (filled > 0 || frames == 0) {
            writeFrame();
        }
        int payload = table.size() + SeekIndex.FOOTER_SIZE;
        ByteArrayOutputStream skippable = new ByteArrayOutputStream(SeekIndex.SKIPPABLE_HEADER_SIZE + payload);
        le32(skippable, SeekIndex.SKIPPABLE_SEEK_MAGIC);
        le32(skippable, payload);
        table.writeTo(skippable);
        le32(skippable, frames);
        skippable.write(0x80);  // entries carry checksums
        le32(skippable, SeekIndex.FOOTER_MAGIC);
        skippable.writeTo(out);
        finished = true;
    }

    private static void le32(ByteArrayOutputStream b, int value) {
        b.write(value);
        b.write(value >>> 8);
        b.write(value >>> 16);
        b.write(value >>> 24);
    }

    @Override
    public void resetState() {
        filled = 0;
        frames = 0;
        table.reset();
        finished = false;
    }

    @Override
    public void close() throws IOException {
        try {
            super.close();  // finish(), then the underlying stream
        } finally {
            if (ctx != null) {
                ctx.close();
                ctx = null;
            }
        }
    }
}
