package weir.hadoop;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;

/**
 * How the codec finds a file's length and its seek table (FileTail): from the stream's
 * {@code getPos() + available()} in two positioned reads when that is right, by probing when it is
 * not, and exact either way. Run by hadoop/tests/test_file_tail.py: {@code java -cp JAR:CLASSES:
 * PYSPARK_JARS weir.hadoop.FileTailTest DIR}; prints one line per check, exits 1 if any failed.
 */
public final class FileTailTest {
    private static int failures;

    /** What a {@link VirtualFile}'s {@code available()} says. */
    enum Available { TRUE, ZERO, HIGH, LOW }

    /**
     * A file of {@code length} bytes, zeros but for its last bytes, that counts its positioned
     * reads; {@code available()} as {@link Available} says, capped at {@code Integer.MAX_VALUE} as
     * Hadoop's streams do.
     */
    static class VirtualFile extends FSInputStream {
        final long length;
        final byte[] tail;
        final Available mode;
        long pos;
        int positionedReads;

        VirtualFile(long length, byte[] tail, Available mode) {
            this.length = length;
            this.tail = tail;
            this.mode = mode;
        }

        private byte at(long p) {
            long t = length - tail.length;
            return p >= t ? tail[(int) (p - t)] : 0;
        }

        @Override
        public void seek(long p) throws IOException {
            if (p < 0) {
                throw new EOFException("negative seek");
            }
            pos = p;
        }

        @Override
        public long getPos() {
            return pos;
        }

        @Override
        public boolean seekToNewSource(long p) {
            return false;
        }

        @Override
        public int read() {
            return pos >= length ? -1 : at(pos++) & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (len == 0) {
                return 0;
            }
            if (pos >= length) {
                return -1;
            }
            int n = (int) Math.min(len, length - pos);
            for (int i = 0; i < n; i++) {
                b[off + i] = at(pos + i);
            }
            pos += n;
            return n;
        }

        @Override
        public int read(long position, byte[] b, int off, int len) throws IOException {
            positionedReads++;
            return super.read(position, b, off, len);
        }

        @Override
        public int available() {
            long left = length - pos;
            long said = switch (mode) {
                case TRUE -> left;
                case ZERO -> 0;
                case HIGH -> left + 1000;
                case LOW -> left - 1000;
            };
            return (int) Math.max(0, Math.min(Integer.MAX_VALUE, said));
        }
    }

    /** A {@link VirtualFile} that also gives its length as HDFS's streams do. */
    static final class ReportingFile extends VirtualFile {
        ReportingFile(long length, byte[] tail, Available mode) {
            super(length, tail, mode);
        }

        public long getFileLength() {
            return length;
        }
    }

    static void check(boolean ok, String what) {
        System.out.println((ok ? "ok   " : "FAIL ") + what);
        if (!ok) {
            failures++;
        }
    }

    /** A seek table without checksums listing frames of these compressed and content sizes. */
    static byte[] seekTable(long[] sizes, long[] contentSizes) {
        int n = sizes.length;
        ByteBuffer b = ByteBuffer.allocate(8 + 8 * n + 9).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(SeekIndex.SKIPPABLE_SEEK_MAGIC).putInt(8 * n + 9);
        for (int i = 0; i < n; i++) {
            b.putInt((int) sizes[i]).putInt((int) contentSizes[i]);
        }
        b.putInt(n).put((byte) 0).putInt(SeekIndex.FOOTER_MAGIC);
        return b.array();
    }

    /** A virtual seekable file of about {@code length} bytes: {@code frames} frames, then the table. */
    static VirtualFile virtualSeekable(long length, int frames, Available mode, boolean reports) {
        long data = length - (8 + 8L * frames + 9);
        long[] sizes = new long[frames];
        long[] contentSizes = new long[frames];
        for (int i = 0; i < frames; i++) {
            sizes[i] = data / frames + (i == frames - 1 ? data % frames : 0);
            contentSizes[i] = 3 * sizes[i] % 0xFFFF_FFFFL;
        }
        byte[] table = seekTable(sizes, contentSizes);
        return reports ? new ReportingFile(length, table, mode) : new VirtualFile(length, table, mode);
    }

    static void virtualFiles() throws IOException {
        long big = (3L << 30) + 12345;  // past available()'s int cap
        for (long length : new long[] {1_000_000, 200_105_043, big}) {
            for (Available mode : Available.values()) {
                for (boolean reports : new boolean[] {false, true}) {
                    for (long known : new long[] {0, length / 3, length - 1, length}) {
                        VirtualFile file = virtualSeekable(length, 37, mode, reports);
                        int said = file.available();
                        boolean exact = said > 0 && said < Integer.MAX_VALUE ? mode == Available.TRUE : reports;
                        FileTail tail = FileTail.read(new FSDataInputStream(file), known);
                        SeekIndex index = SeekIndex.read(tail, tail.length);
                        String what = "length " + length + ", available() " + mode
                                + (reports ? ", getFileLength()" : "") + ", split end " + known;
                        check(tail.length == length, what + ": length " + tail.length);
                        check(index.count() == 37 && index.offsets[0] == 0
                                && index.dataEnd() == length - (8 + 8 * 37 + 9),
                                what + ": the seek table's 37 frames, from 0 to the table");
                        check(tail.hinted == exact, what + ": hinted " + tail.hinted);
                        if (exact) {
                            check(file.positionedReads == 2, what + ": " + file.positionedReads
                                    + " positioned reads (the tail and the end)");
                        } else {
                            check(file.positionedReads <= 150, what + ": probed in " + file.positionedReads
                                    + " positioned reads");
                        }
                    }
                }
            }
        }
        VirtualFile empty = new VirtualFile(0, new byte[0], Available.TRUE);
        FileTail none = FileTail.read(new FSDataInputStream(empty), 0);
        check(none.length == 0 && SeekIndex.read(none, none.length).count() == 0, "an empty file: length 0, no block");
    }

    /** Hadoop's own local streams, with and without checksums: the length from the stream, exact. */
    static void localStreams(java.nio.file.Path dir) throws IOException {
        byte[] text = new byte[1_000_000];  // compresses to more than the tail
        java.util.Random random = new java.util.Random(51);
        for (int i = 0; i < text.length; i++) {
            text[i] = (byte) (random.nextInt(61) == 0 ? '\n' : 'a' + random.nextInt(26));
        }
        Configuration conf = new Configuration();
        LocalFileSystem local = FileSystem.getLocal(conf);
        Path checked = new Path(dir.resolve("checked.txt.zst").toUri());
        Path raw = new Path(dir.resolve("raw.txt.zst").toUri());
        try (OutputStream out = new SeekableOutputStream(local.create(checked, true), 3, 64 << 10)) {
            out.write(text);
        }
        try (OutputStream out = new SeekableOutputStream(local.getRawFileSystem().create(raw, true), 3, 64 << 10)) {
            out.write(text);
        }
        check(Files.exists(dir.resolve(".checked.txt.zst.crc")), "LocalFileSystem wrote a .crc beside the file");
        FileSystem[] systems = {local, local, local.getRawFileSystem()};
        Path[] paths = {checked, raw, raw};
        String[] names = {"LocalFileSystem, checksums", "LocalFileSystem, no .crc", "RawLocalFileSystem"};
        for (int k = 0; k < paths.length; k++) {
            long length = systems[k].getFileStatus(paths[k]).getLen();
            for (long known : new long[] {0, length / 2, length}) {
                try (InputStream in = systems[k].open(paths[k])) {
                    FileTail tail = FileTail.read(in, known);
                    String what = names[k] + ", " + length + " bytes, split end " + known;
                    check(tail.length == length && tail.hinted, what + ": length " + tail.length + " of "
                            + length + " from the stream, hinted " + tail.hinted);
                    check(SeekIndex.read(tail, tail.length).count() == 16, what + ": 16 frames of 64 KiB");
                }
            }
        }
    }

    /**
     * Issue 67: a table entry no zstd frame could have is refused, naming the entry and its offset; a
     * skippable frame's entry of no content passes. The file is {@code frames} zero bytes, then
     * {@code skippable} (a frame of that magic's bytes), then the table of {@code sizes} and
     * {@code contentSizes}.
     */
    static String indexProblem(long[] sizes, long[] contentSizes, byte[] skippable) throws IOException {
        byte[] table = seekTable(sizes, contentSizes);
        byte[] tail = new byte[skippable.length + table.length];
        System.arraycopy(skippable, 0, tail, 0, skippable.length);
        System.arraycopy(table, 0, tail, skippable.length, table.length);
        long length = table.length;
        for (long size : sizes) {
            length += size;
        }
        VirtualFile file = new VirtualFile(length, tail, Available.TRUE);
        FileTail fileTail = FileTail.read(new FSDataInputStream(file), length);
        try {
            SeekIndex index = SeekIndex.read(fileTail, fileTail.length);
            return index.count() == sizes.length ? null : index.count() + " blocks, not " + sizes.length;
        } catch (IOException e) {
            return e.getMessage();
        }
    }

    static void impossibleEntries() throws IOException {
        byte[] none = new byte[0];
        String empty = indexProblem(new long[] {100_000, 150_000, 100_000}, new long[] {300_000, 0, 300_000}, none);
        check(empty != null && empty.contains("entry 1 lists 150000 compressed bytes for 0 bytes of content, more "
                + "than any zstd frame takes for it (at most 25): the frame at offset 100000 is a zstd frame"),
                "a frame of 150,000 bytes listed with no content is refused: " + empty);
        String little = indexProblem(new long[] {100_000, 150_000}, new long[] {300_000, 100}, none);
        check(little != null && little.contains("entry 1 lists 150000 compressed bytes for 100 bytes of content"),
                "a frame of 150,000 bytes listed with 100 bytes of content is refused: " + little);
        String much = indexProblem(new long[] {1000, 1000}, new long[] {3000, 100_000_000}, none);
        check(much != null && much.contains("entry 1 lists 100000000 bytes of content for 1000 compressed bytes"),
                "1,000 bytes listed with 100,000,000 bytes of content are refused: " + much);
        ByteBuffer frame = ByteBuffer.allocate(2048).order(ByteOrder.LITTLE_ENDIAN);
        frame.putInt(0x184D2A5B).putInt(2040);
        String skippable = indexProblem(new long[] {100_000, 2048}, new long[] {300_000, 0}, frame.array());
        check(skippable == null, "a skippable frame of 2,048 bytes listed with no content passes: " + skippable);
        String small = indexProblem(new long[] {100_000, 12, 100_000}, new long[] {300_000, 0, 300_000}, none);
        check(small == null, "an entry of 12 bytes and no content (pzstd's, an empty frame) passes: " + small);
    }

    public static void main(String[] args) throws IOException {
        impossibleEntries();
        virtualFiles();
        localStreams(java.nio.file.Path.of(args[0]));
        System.out.println(failures == 0 ? "all passed" : failures + " failed");
        System.exit(failures == 0 ? 0 : 1);
    }
}
