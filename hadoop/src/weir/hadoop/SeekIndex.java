package weir.hadoop;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.fs.PositionedReadable;

/**
 * Where a file's independently decodable blocks lie, read from the seek tables at its end.
 *
 * <p>zstd's seekable format ends a file with a skippable frame (magic 0x184D2A5E) that holds one
 * entry per frame (compressed size u32, decompressed size u32, optionally a checksum u32) and a
 * 9-byte footer: entry count u32, descriptor byte (bit 7: entries carry checksums), magic
 * 0x8F92EAB1. The frames it lists end where the table starts. A concatenation of such files
 * ({@code cat a.zst b.zst}) has one table per part: the byte before a part's first frame is the
 * end of the previous part's table, so the chain is followed back to offset 0.
 *
 * <p>Each entry becomes a block. A region the chain does not reach (a file without a table, or a
 * prefix without one) becomes one block of unknown decoded size: decoded from its start, it is
 * read whole by the split that owns offset 0, so such a file is one split in effect and never
 * read wrong. A table that does not add up (sizes past the start of the file) is ignored the
 * same way. A table whose entry no zstd frame could have (a frame of kilobytes listed with no
 * content: every block after it would be placed wrong) is refused with an {@link IOException}.
 */
final class SeekIndex {
    static final int SKIPPABLE_SEEK_MAGIC = 0x184D2A5E;
    /** Every skippable frame's magic, its low 4 bits cleared. */
    static final int SKIPPABLE_MAGIC_BASE = 0x184D2A50;
    static final int FOOTER_MAGIC = 0x8F92EAB1;
    static final int FOOTER_SIZE = 9;
    /** Skippable frame header: magic and frame size. */
    static final int SKIPPABLE_HEADER_SIZE = 8;

    /** Compressed offset of each block, ascending, the first at 0. */
    final long[] offsets;
    /** Compressed size of each block. */
    final long[] sizes;
    /** Decompressed size of each block, or -1 where no table gives it. */
    final long[] contentSizes;
    /** The file's length. */
    final long length;
    /**
     * Where each block's content starts within the file's content, and at the end the total: the
     * sum of the earlier blocks' weights, a block's weight being its decompressed size plus 1 (its
     * compressed size plus 1 where that is unknown), so that the starts strictly increase.
     */
    final long[] contentStarts;

    private SeekIndex(long[] offsets, long[] sizes, long[] contentSizes, long length) {
        this.offsets = offsets;
        this.sizes = sizes;
        this.contentSizes = contentSizes;
        this.length = length;
        contentStarts = new long[offsets.length + 1];
        for (int i = 0; i < offsets.length; i++) {
            long weight = (contentSizes[i] >= 0 ? contentSizes[i] : sizes[i]) + 1;
            contentStarts[i + 1] = contentStarts[i] + weight;
        }
    }

    /**
     * The first block whose content start, scaled from the file's content to its length, is at or
     * after {@code position}: that is, {@code contentStarts[i] / total >= position / length}, in
     * exact 128-bit arithmetic so that every split of the file draws the same lines between
     * blocks. {@link #count()} if none; 0 for position 0.
     */
    int firstPlacedAtOrAfter(long position) {
        long total = contentStarts[offsets.length];
        int i = 0;
        while (i < offsets.length && !productAtLeast(contentStarts[i], length, position, total)) {
            i++;
        }
        return i;
    }

    /** Whether {@code a * b >= c * d}, for values that are not negative. */
    static boolean productAtLeast(long a, long b, long c, long d) {
        long high = Math.multiplyHigh(a, b);
        long otherHigh = Math.multiplyHigh(c, d);
        if (high != otherHigh) {
            return high > otherHigh;
        }
        return Long.compareUnsigned(a * b, c * d) >= 0;
    }

    int count() {
        return offsets.length;
    }

    /** Offset just past the last block's compressed bytes (the start of the last table, if any). */
    long dataEnd() {
        int last = offsets.length - 1;
        return last < 0 ? 0 : offsets[last] + sizes[last];
    }

    /**
     * Reads the index of a file of {@code length} bytes.
     *
     * @throws IOException a read failed, or a table lists an entry no zstd frame could have
     */
    static SeekIndex read(PositionedReadable in, long length) throws IOException {
        List<long[]> parts = new ArrayList<>();  // each: [offset, csize, dsize] triples, flattened per part
        long end = length;
        while (end > 0) {
            long[] part = readTable(in, end);
            if (part == null) {
                break;
            }
            parts.add(part);
            end = part[0];  // the part's first frame: the previous part's table ends just before it
        }
        Collections.reverse(parts);
        int count = end > 0 ? 1 : 0;
        for (long[] part : parts) {
            count += (part.length - 1) / 3;
        }
        long[] offsets = new long[count];
        long[] sizes = new long[count];
        long[] contentSizes = new long[count];
        int i = 0;
        if (end > 0) {  // a prefix no table lists: one block, decoded in full by its owner
            offsets[0] = 0;
            sizes[0] = end;
            contentSizes[0] = -1;
            i = 1;
        }
        for (long[] part : parts) {
            for (int k = 1; k < part.length; k += 3) {
                offsets[i] = part[k];
                sizes[i] = part[k + 1];
                contentSizes[i] = part[k + 2];
                i++;
            }
        }
        return new SeekIndex(offsets, sizes, contentSizes, length);
    }

    /**
     * The table that ends at {@code end}, as [firstFrameOffset, (offset, csize, dsize)...], or null
     * if the bytes before {@code end} are not a seek table whose frames fit in front of it.
     */
    private static long[] readTable(PositionedReadable in, long end) throws IOException {
        if (end < SKIPPABLE_HEADER_SIZE + FOOTER_SIZE) {
            return null;
        }
        byte[] footer = new byte[FOOTER_SIZE];
        in.readFully(end - FOOTER_SIZE, footer, 0, FOOTER_SIZE);
        if (le32(footer, 5) != FOOTER_MAGIC) {
            return null;
        }
        long frames = le32(footer, 0) & 0xFFFFFFFFL;
        int descriptor = footer[4] & 0xFF;
        if ((descriptor & 0x7C) != 0) {  // reserved bits must be zero
            return null;
        }
        int entrySize = (descriptor & 0x80) != 0 ? 12 : 8;
        long tableSize = SKIPPABLE_HEADER_SIZE + frames * entrySize + FOOTER_SIZE;
        if (tableSize > end) {
            return null;
        }
        long tableStart = end - tableSize;
        byte[] table = new byte[(int) tableSize];  // at most end bytes; bounded by the check above
        in.readFully(tableStart, table, 0, table.length);
        if (le32(table, 0) != SKIPPABLE_SEEK_MAGIC
                || (le32(table, 4) & 0xFFFFFFFFL) != tableSize - SKIPPABLE_HEADER_SIZE) {
            return null;
        }
        long total = 0;
        for (int f = 0; f < frames; f++) {
            total += le32(table, SKIPPABLE_HEADER_SIZE + f * entrySize) & 0xFFFFFFFFL;
        }
        if (total > tableStart) {
            return null;
        }
        long[] part = new long[1 + 3 * (int) frames];
        long offset = tableStart - total;
        part[0] = offset;
        byte[] magic = new byte[4];
        for (int f = 0; f < frames; f++) {
            int at = SKIPPABLE_HEADER_SIZE + f * entrySize;
            long csize = le32(table, at) & 0xFFFFFFFFL;
            long dsize = le32(table, at + 4) & 0xFFFFFFFFL;
            // An entry of no content larger than any empty zstd frame must be a skippable frame
            // (a member index, pzstd's size frames, an earlier table): one read of its magic.
            boolean skippable = false;
            if (dsize == 0 && csize > mostCompressed(0)) {
                in.readFully(offset, magic, 0, 4);
                skippable = (le32(magic, 0) & 0xFFFFFFF0) == SKIPPABLE_MAGIC_BASE;
            }
            String why = skippable ? null : impossibility(csize, dsize);
            if (why != null) {
                throw new IOException("the seek table at offset " + tableStart + " does not match the frames: entry "
                        + f + " lists " + why + ": the frame at offset " + offset + " is a zstd frame");
            }
            part[1 + 3 * f] = offset;
            part[2 + 3 * f] = csize;
            part[3 + 3 * f] = dsize;
            offset += csize;
        }
        return part;
    }

    /**
     * The most bytes a zstd frame of {@code content} bytes of content takes, whatever wrote it: a
     * header of at most 18 bytes, a checksum of 4, blocks of at least one byte each but one empty last
     * block, a raw block costing its 3-byte header more than its content. Far above zstd's
     * ZSTD_compressBound, which frames flushed every few bytes pass.
     */
    static long mostCompressed(long content) {
        return 4 * content + 25;
    }

    /** The most content a zstd frame of {@code compressed} bytes holds: 128 KiB per 3-byte block header. */
    static long mostContent(long compressed) {
        return compressed * 43_691;
    }

    /** Why no zstd frame takes {@code compressed} bytes for {@code content} bytes of content; null if one can. */
    static String impossibility(long compressed, long content) {
        if (compressed > mostCompressed(content)) {
            return compressed + " compressed bytes for " + content + " bytes of content, more than any zstd frame "
                    + "takes for it (at most " + mostCompressed(content) + ")";
        }
        if (content > mostContent(compressed)) {
            return content + " bytes of content for " + compressed + " compressed bytes, more than any zstd frame "
                    + "of that size holds (at most " + mostContent(compressed) + ")";
        }
        return null;
    }

    static int le32(byte[] b, int at) {
        return (b[at] & 0xFF) | (b[at + 1] & 0xFF) << 8 | (b[at + 2] & 0xFF) << 16 | (b[at + 3] & 0xFF) << 24;
    }
}
