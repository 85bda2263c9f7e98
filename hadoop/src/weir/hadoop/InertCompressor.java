package weir.hadoop;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.compress.Compressor;
import org.apache.hadoop.io.compress.DoNotPool;

/**
 * What CodecPool hands out for this codec: {@link SeekableOutputStream} compresses with zstd-jni
 * itself and never calls it. Not pooled, so nothing is kept between uses.
 */
@DoNotPool
final class InertCompressor implements Compressor {
    @Override
    public void setInput(byte[] b, int off, int len) {
        throw new UnsupportedOperationException("weir-hadoop: the codec's streams compress by themselves");
    }

    @Override
    public boolean needsInput() {
        return false;
    }

    @Override
    public void setDictionary(byte[] b, int off, int len) {
        throw new UnsupportedOperationException("weir-hadoop: no dictionaries");
    }

    @Override
    public long getBytesRead() {
        return 0;
    }

    @Override
    public long getBytesWritten() {
        return 0;
    }

    @Override
    public void finish() {
    }

    @Override
    public boolean finished() {
        return true;
    }

    @Override
    public int compress(byte[] b, int off, int len) {
        throw new UnsupportedOperationException("weir-hadoop: the codec's streams compress by themselves");
    }

    @Override
    public void reset() {
    }

    @Override
    public void end() {
    }

    @Override
    public void reinit(Configuration conf) {
    }
}
