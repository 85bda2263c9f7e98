package weir.hadoop;

import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * Direct buffers kept for the next split read in the same JVM. A direct buffer is freed only by
 * the garbage collector, and allocating one zeroes it; an executor reads many splits one after
 * another, so each returns its two buffers here on close and the next task takes them. At most
 * {@link #KEPT} are kept; one too small is dropped for a new one.
 */
final class DirectBuffers {
    /** Buffers kept: two per split read, for a few concurrent tasks. */
    static final int KEPT = 8;

    private static final ConcurrentLinkedDeque<ByteBuffer> FREE = new ConcurrentLinkedDeque<>();

    private DirectBuffers() {
    }

    /** A cleared direct buffer of at least {@code capacity} bytes, reused when one is kept. */
    static ByteBuffer take(int capacity) {
        for (ByteBuffer b; (b = FREE.pollFirst()) != null;) {
            if (b.capacity() >= capacity) {
                return b.clear();
            }
            // Too small: dropped for the collector; look at the next.
        }
        return ByteBuffer.allocateDirect(capacity);
    }

    /** Gives {@code buffer} back for a later {@link #take}; null is ignored. */
    static void give(ByteBuffer buffer) {
        if (buffer != null && FREE.size() < KEPT) {
            FREE.addFirst(buffer);
        }
    }
}
