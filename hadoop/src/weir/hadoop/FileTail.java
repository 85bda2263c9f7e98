package weir.hadoop;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.PositionedReadable;
import org.apache.hadoop.fs.Seekable;

/**
 * A file's length and its last bytes (where its seek table lies), found from the open stream that
 * is all a codec is given: {@code createInputStream(in, decompressor, start, end, mode)} gets no
 * path and no file status.
 *
 * <p>The length comes from the stream's own: {@code getPos() + available()}. Hadoop's streams
 * compute {@code available()} from the length they hold since the open (HDFS's DFSInputStream and
 * S3A's S3AInputStream: length minus position, capped at {@code Integer.MAX_VALUE}; the local file
 * system: the file's size minus the position, through its checksum and buffer layers), so it costs
 * no request. An {@code available()} is an estimate by its contract, so the value is proven, not
 * trusted: the tail read that ends there succeeds (that many bytes exist) and a one-byte read there
 * finds the end (no more do). The tail, {@link #SIZE} bytes, then serves the seek table's reads:
 * a split costs two positioned reads, and on HDFS and S3A the second is answered from the stream's
 * length without a request. Past the cap (2 GiB or more after the position), HDFS's streams give
 * their length by {@code getFileLength()}. Where no hint holds (a stream that says 0; S3A or the
 * local file system with 2 GiB or more left), the length is probed by one-byte positioned reads,
 * galloping from what is known to exist and then bisecting: about 2 log2 of the distance, some
 * 40 to 50 reads.
 *
 * <p>The length must be exact, not an estimate: frames are placed in splits by their content
 * scaled to the length ({@link SeekIndex#firstPlacedAtOrAfter}), so every split of a file must
 * find the same one, or a frame would be read twice or not at all.
 */
final class FileTail implements PositionedReadable {
    /** Bytes read at the end: the footer and the table of a file of up to about 5,000 frames. */
    static final int SIZE = 64 << 10;

    /** The file's length. */
    final long length;
    /** Whether the stream's hint gave the length (no probe). */
    final boolean hinted;
    private final PositionedReadable file;
    private final long start;
    private final byte[] bytes;

    private FileTail(PositionedReadable file, long length, byte[] bytes, boolean hinted) {
        this.file = file;
        this.length = length;
        this.bytes = bytes;
        this.start = length - bytes.length;
        this.hinted = hinted;
    }

    /**
     * The tail of the file behind {@code in}, a stream that is {@link Seekable} and
     * {@link PositionedReadable}, of which at least {@code known} bytes exist.
     */
    static FileTail read(InputStream in, long known) throws IOException {
        PositionedReadable file = (PositionedReadable) in;
        long hint = hint(in);
        if (hint > 0 && hint >= known) {
            FileTail tail = endingAt(file, hint, true);
            if (tail != null) {
                if (!exists(file, hint)) {
                    return tail;
                }
                // hint + 1 bytes exist: the hint was short; probe on from it.
                return endingAt(file, probeBeyond(file, hint + 1), false);
            }
        }
        return endingAt(file, probe(file, known), false);
    }

    /**
     * What the stream says its length is, or -1: {@code getPos() + available()} when that is under
     * the int cap, else a public {@code long getFileLength()} of the stream or the streams it wraps
     * (HDFS's HdfsDataInputStream and DFSInputStream have one), looked up by name because the
     * class path need not hold HDFS's client.
     */
    private static long hint(InputStream in) {
        try {
            int available = in.available();
            if (available > 0 && available < Integer.MAX_VALUE) {
                return ((Seekable) in).getPos() + available;
            }
        } catch (IOException e) {
            // the stream's own length, or the probe, finds out
        }
        InputStream stream = in;
        for (int depth = 0; stream != null && depth < 4; depth++) {
            try {
                Method getter = stream.getClass().getMethod("getFileLength");
                if (getter.getReturnType() == long.class) {
                    return (long) getter.invoke(stream);
                }
            } catch (ReflectiveOperationException | RuntimeException e) {
                // not this stream
            }
            stream = stream instanceof FSDataInputStream wrapper ? wrapper.getWrappedStream() : null;
        }
        return -1;
    }

    /**
     * The tail of a file whose length is {@code length}; null if {@code guess} and the file ends
     * before {@code length}.
     */
    private static FileTail endingAt(PositionedReadable file, long length, boolean guess) throws IOException {
        byte[] bytes = new byte[(int) Math.min(SIZE, length)];
        try {
            file.readFully(length - bytes.length, bytes, 0, bytes.length);
        } catch (EOFException e) {
            if (guess) {
                return null;
            }
            throw e;
        }
        return new FileTail(file, length, bytes, guess);
    }

    /** The length of a file of which at least {@code known} bytes exist. */
    static long probe(PositionedReadable in, long known) throws IOException {
        return exists(in, known) ? probeBeyond(in, known + 1) : known;
    }

    /**
     * The length of a file of which at least {@code lo} bytes exist, {@code lo} at least 1:
     * galloping past {@code lo}, then bisecting.
     */
    static long probeBeyond(PositionedReadable in, long lo) throws IOException {
        long step = 1L << 16;
        long hi = lo + step;  // candidate: byte hi - 1 missing
        while (exists(in, hi - 1)) {
            lo = hi;
            step <<= 1;
            hi = lo + step;
        }
        // lo bytes exist, byte hi - 1 does not: the length is in [lo, hi - 1].
        long a = lo;
        long b = hi - 1;
        while (a < b) {
            long mid = a + (b - a) / 2;  // does byte mid exist?
            if (exists(in, mid)) {
                a = mid + 1;
            } else {
                b = mid;
            }
        }
        return a;
    }

    private static boolean exists(PositionedReadable in, long position) throws IOException {
        try {
            return in.read(position, new byte[1], 0, 1) > 0;
        } catch (EOFException e) {
            return false;
        }
    }

    private boolean holds(long position, int length) {
        return position >= start && position + length <= this.length;
    }

    @Override
    public int read(long position, byte[] buffer, int offset, int length) throws IOException {
        if (length > 0 && holds(position, length)) {
            System.arraycopy(bytes, (int) (position - start), buffer, offset, length);
            return length;
        }
        return file.read(position, buffer, offset, length);
    }

    @Override
    public void readFully(long position, byte[] buffer, int offset, int length) throws IOException {
        if (holds(position, length)) {
            System.arraycopy(bytes, (int) (position - start), buffer, offset, length);
            return;
        }
        file.readFully(position, buffer, offset, length);
    }

    @Override
    public void readFully(long position, byte[] buffer) throws IOException {
        readFully(position, buffer, 0, buffer.length);
    }
}
