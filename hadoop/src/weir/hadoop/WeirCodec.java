package weir.hadoop;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.PositionedReadable;
import org.apache.hadoop.fs.Seekable;
import org.apache.hadoop.io.compress.CompressionInputStream;
import org.apache.hadoop.io.compress.CompressionOutputStream;
import org.apache.hadoop.io.compress.Compressor;
import org.apache.hadoop.io.compress.Decompressor;
import org.apache.hadoop.io.compress.SplitCompressionInputStream;
import org.apache.hadoop.io.compress.SplittableCompressionCodec;

/**
 * A splittable Hadoop codec for {@code .zst}: reads zstd's seekable format (weir's files, any
 * seekable-format file, concatenations of them) split at frames, and writes it.
 *
 * <p>Reading a split: the file's seek tables give every frame's offset ({@link SeekIndex}); the
 * split's start and end move to frame boundaries ({@link FrameSplitInputStream}), so Hadoop's
 * LineRecordReader and Spark's text, CSV and JSON sources read each line once. Frames are placed
 * by their content, so splits of equal compressed size get equal content to decode and parse. A file without a
 * table is read whole by its first split and the others are empty.
 *
 * <p>Writing: {@link SeekableOutputStream}, frames of {@code weir.zstd.frame.size} bytes (default:
 * weir's size for the level) at level {@code weir.zstd.level} (default 3).
 *
 * <p>Hadoop's CompressionCodecFactory maps a suffix to the codec registered last for it; the codecs
 * listed in {@code io.compression.codecs} are registered after those found on the class path, so
 * listing this one there (Spark: {@code spark.hadoop.io.compression.codecs=weir.hadoop.WeirCodec})
 * makes {@code .zst} files ours rather than Hadoop's ZStandardCodec or Spark's zstd fallback.
 */
public final class WeirCodec implements SplittableCompressionCodec, Configurable {
    /** Configuration key: the compression level, 1 to 22 (or negative for zstd's fast levels). */
    public static final String LEVEL_KEY = "weir.zstd.level";
    /** Configuration key: input bytes per frame; 0 or absent means weir's size for the level. */
    public static final String FRAME_SIZE_KEY = "weir.zstd.frame.size";

    private Configuration conf;

    @Override
    public void setConf(Configuration conf) {
        this.conf = conf;
    }

    @Override
    public Configuration getConf() {
        return conf;
    }

    @Override
    public String getDefaultExtension() {
        return ".zst";
    }

    @Override
    public SplitCompressionInputStream createInputStream(InputStream seekableIn, Decompressor decompressor,
            long start, long end, READ_MODE readMode) throws IOException {
        if (!(seekableIn instanceof Seekable) || !(seekableIn instanceof PositionedReadable)) {
            throw new IOException("weir-hadoop: a split needs a seekable stream with positioned reads, not "
                    + seekableIn.getClass().getName());
        }
        FileTail tail = FileTail.read(seekableIn, end);
        String name = StreamName.of(seekableIn);
        SeekIndex index;
        try {
            index = SeekIndex.read(tail, tail.length);
        } catch (IOException e) {
            throw new IOException("weir-hadoop: " + name + ": " + e.getMessage(), e);
        }
        return new FrameSplitInputStream(seekableIn, name, index, start, end);
    }

    @Override
    public CompressionInputStream createInputStream(InputStream in) throws IOException {
        return new WholeInputStream(in);
    }

    @Override
    public CompressionInputStream createInputStream(InputStream in, Decompressor decompressor) throws IOException {
        return new WholeInputStream(in);
    }

    @Override
    public Class<? extends Decompressor> getDecompressorType() {
        return InertDecompressor.class;
    }

    @Override
    public Decompressor createDecompressor() {
        return new InertDecompressor();
    }

    @Override
    public CompressionOutputStream createOutputStream(OutputStream out) throws IOException {
        int level = conf == null ? 3 : conf.getInt(LEVEL_KEY, 3);
        long frameSize = conf == null ? 0 : conf.getLongBytes(FRAME_SIZE_KEY, 0);
        if (frameSize <= 0) {
            frameSize = frameSizeForLevel(level);
        }
        if (frameSize > Integer.MAX_VALUE - 1024) {
            throw new IOException("weir-hadoop: " + FRAME_SIZE_KEY + " " + frameSize + " is over 2 GiB");
        }
        return new SeekableOutputStream(out, level, (int) frameSize);
    }

    @Override
    public CompressionOutputStream createOutputStream(OutputStream out, Compressor compressor) throws IOException {
        return createOutputStream(out);
    }

    @Override
    public Class<? extends Compressor> getCompressorType() {
        return InertCompressor.class;
    }

    @Override
    public Compressor createCompressor() {
        return new InertCompressor();
    }

    /** weir's frame size for a level (docs/design.md, "Frames sized by level"). */
    static long frameSizeForLevel(int level) {
        if (level <= 6) {
            return 8L << 20;
        } else if (level <= 8) {
            return 16L << 20;
        } else if (level <= 16) {
            return 32L << 20;
        } else if (level <= 19) {
            return 64L << 20;
        } else if (level == 20) {
            return 256L << 20;
        }
        return 512L << 20;
    }
}
