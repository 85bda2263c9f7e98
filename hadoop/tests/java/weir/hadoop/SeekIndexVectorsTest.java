package weir.hadoop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.EOFException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.apache.hadoop.fs.FSInputStream;

/**
 * The shared seek-table vectors (testdata/vectors/seek-table, issue 69) read by {@link SeekIndex}:
 * every case in the folder, so a case added there is tested here. The codec maps the vectors'
 * readings to its own behaviour: a table read ("ok", and "frames-mismatch", since it trusts the sizes
 * a table gives and leaves the frames' checks to the decoder) gives one block per entry of every
 * table in the chain, after one block of unknown size for a prefix no table lists; no table
 * ("no-table") and a refused one ("corrupt-table") give one block of the whole file, of unknown
 * size; an entry no zstd frame can have ("impossible-entry") is an {@link IOException}. Run by
 * hadoop/tests/test_seek_vectors.py: {@code java -cp ... weir.hadoop.SeekIndexVectorsTest DIR};
 * prints one line per case, exits 1 if any failed.
 */
public final class SeekIndexVectorsTest {
    private static int failures;
    private static int passed;

    /** A file held in memory, read through Hadoop's positioned reads. */
    static final class MemoryFile extends FSInputStream {
        private final byte[] data;
        private long pos;

        MemoryFile(byte[] data) {
            this.data = data;
        }

        @Override
        public void seek(long p) throws IOException {
            if (p < 0 || p > data.length) {
                throw new EOFException("seek to " + p + " of " + data.length);
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
            return pos >= data.length ? -1 : data[(int) pos++] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (len == 0) {
                return 0;
            }
            if (pos >= data.length) {
                return -1;
            }
            int n = (int) Math.min(len, data.length - pos);
            System.arraycopy(data, (int) pos, b, off, n);
            pos += n;
            return n;
        }
    }

    private static void check(String name, boolean ok, String detail) {
        if (ok) {
            passed++;
            System.out.println("ok    " + name);
        } else {
            failures++;
            System.out.println("FAIL  " + name + ": " + detail);
        }
    }

    private static String blocks(long[] offsets, long[] sizes, long[] contents) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < offsets.length; i++) {
            out.append('(').append(offsets[i]).append(',').append(sizes[i]).append(',').append(contents[i]).append(')');
        }
        return out.toString();
    }

    static void one(Path json) throws IOException {
        JsonNode vector = new ObjectMapper().readTree(json.toFile());
        String name = json.getFileName().toString().replace(".json", "");
        byte[] data = Files.readAllBytes(json.resolveSibling(vector.get("file").asText()));
        String reading = vector.get("reading").asText();
        SeekIndex index;
        try {
            index = SeekIndex.read(new MemoryFile(data), data.length);
        } catch (IOException error) {
            boolean named = false;
            for (JsonNode entry : vector.path("entries")) {
                named |= error.getMessage().contains("entry " + entry.asInt() + " lists");
            }
            check(name, reading.equals("impossible-entry") && named, "refused: " + error.getMessage());
            return;
        }
        List<long[]> want = new ArrayList<>();  // (offset, size, content)
        switch (reading) {
            case "no-table", "corrupt-table" -> {
                if (data.length > 0) {
                    want.add(new long[] {0, data.length, -1});
                }
            }
            case "ok", "frames-mismatch" -> {
                JsonNode tables = vector.get("tables");
                long first = tables.get(0).get("frames").size() > 0
                        ? tables.get(0).get("frames").get(0).get("offset").asLong()
                        : tables.get(0).get("offset").asLong();
                if (first > 0) {
                    want.add(new long[] {0, first, -1});
                }
                for (JsonNode table : tables) {
                    for (JsonNode frame : table.get("frames")) {
                        want.add(new long[] {frame.get("offset").asLong(), frame.get("compressed").asLong(),
                            frame.get("content").asLong()});
                    }
                }
            }
            default -> {
                check(name, false, "read, but the vector says " + reading);
                return;
            }
        }
        long[] offsets = new long[want.size()];
        long[] sizes = new long[want.size()];
        long[] contents = new long[want.size()];
        for (int i = 0; i < want.size(); i++) {
            offsets[i] = want.get(i)[0];
            sizes[i] = want.get(i)[1];
            contents[i] = want.get(i)[2];
        }
        boolean same = Arrays.equals(offsets, index.offsets) && Arrays.equals(sizes, index.sizes)
                && Arrays.equals(contents, index.contentSizes);
        check(name, same, "blocks " + blocks(index.offsets, index.sizes, index.contentSizes) + ", expected "
                + blocks(offsets, sizes, contents));
    }

    public static void main(String[] args) throws IOException {
        Path folder = Path.of(args[0]);
        List<Path> cases;
        try (Stream<Path> listing = Files.list(folder)) {
            cases = listing.filter(p -> p.toString().endsWith(".json")).sorted().toList();
        }
        if (cases.isEmpty()) {
            System.out.println("FAIL  no vectors in " + folder);
            System.exit(1);
        }
        for (Path json : cases) {
            one(json);
        }
        System.out.println(failures == 0 ? "all passed (" + passed + " cases)" : failures + " failed");
        System.exit(failures == 0 ? 0 : 1);
    }
}
