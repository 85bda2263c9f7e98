package weir.hadoop;

import org.apache.hadoop.io.compress.Decompressor;
import org.apache.hadoop.io.compress.DoNotPool;

/**
 * What CodecPool hands out for this codec: the codec's streams decode with zstd-jni themselves and
 * never call it. Not pooled, so nothing is kept between uses.
 */
@DoNotPool
final class InertDecompressor implements Decompressor {
    @Override
    public void setInput(byte[] b, int off, int len) {
        throw new UnsupportedOperationException("weir-hadoop: the codec's streams decode by themselves");
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
    public boolean needsDictionary() {
        return false;
    }

    @Override
    public boolean finished() {
        return true;
    }

    @Override
    public int decompress(byte[] b, int off, int len) {
        throw new UnsupportedOperationException("weir-hadoop: the codec's streams decode by themselves");
    }

    @Override
    public int getRemaining() {
        return 0;
    }

    @Override
    public void reset() {
    }

    @Override
    public void end() {
    }
}
