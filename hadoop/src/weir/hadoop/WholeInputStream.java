package weir.hadoop;

import com.github.luben.zstd.ZstdInputStreamNoFinalizer;
import java.io.IOException;
import java.io.InputStream;
import org.apache.hadoop.fs.Seekable;
import org.apache.hadoop.io.compress.CompressionInputStream;

/**
 * A whole zstd stream decoded from its start, for readers that do not split (whole-text reads,
 * streams that are not files): every frame, concatenations, skippable frames and seek tables, as
 * {@code zstd -d} reads them.
 */
final class WholeInputStream extends CompressionInputStream {
    private final ZstdInputStreamNoFinalizer decoder;

    WholeInputStream(InputStream in) throws IOException {
        super(in);
        decoder = new ZstdInputStreamNoFinalizer(in);
    }

    @Override
    public int read() throws IOException {
        return decoder.read();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        return decoder.read(b, off, len);
    }

    @Override
    public void resetState() {
        // zstd frames are independent: nothing carries over.
    }

    @Override
    public long getPos() throws IOException {
        return in instanceof Seekable ? ((Seekable) in).getPos() : 0;
    }

    @Override
    public void close() throws IOException {
        try {
            decoder.close();
        } finally {
            super.close();
        }
    }
}
