package weir.hadoop;

import java.io.FilterInputStream;
import java.lang.reflect.Field;
import java.net.URI;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.Path;

/**
 * The file behind an open stream, for messages: a codec's {@code createInputStream(in,
 * decompressor, start, end, mode)} gets the stream and no path, and a stream's {@code toString()}
 * is its class and hash ({@code ChecksumFileSystem$FSDataBoundedInputStream@43b376bc}).
 *
 * <p>Hadoop's streams keep their file in a field: the local file system's checksum streams a
 * {@code Path file}, HDFS's DFSInputStream a {@code String src}, S3A's stream a {@code String uri}
 * or {@code key}. They are looked up by name through the wrapped streams ({@link
 * FSDataInputStream#getWrappedStream}, a {@link FilterInputStream}'s {@code in}), a few levels
 * deep, since the class path need not hold those file systems. Where none is found, the stream's
 * own {@code toString()}.
 */
final class StreamName {
    /** Field names that hold a stream's file, in the order tried. */
    private static final String[] FIELDS = {"file", "path", "src", "uri", "key"};
    /** How many wrapped streams deep the search goes. */
    private static final int DEPTH = 5;

    private StreamName() {}

    /** The path of the file {@code stream} reads, or its {@code toString()}. */
    static String of(Object stream) {
        Object level = stream;
        for (int depth = 0; level != null && depth < DEPTH; depth++) {
            String found = fileField(level);
            if (found != null) {
                return found;
            }
            level = wrapped(level);
        }
        return String.valueOf(stream);
    }

    /** The value of the first of {@link #FIELDS} that {@code stream}'s classes declare, as a path. */
    private static String fileField(Object stream) {
        for (Class<?> type = stream.getClass(); type != null && type != Object.class; type = type.getSuperclass()) {
            for (String name : FIELDS) {
                try {
                    Field field = type.getDeclaredField(name);
                    Class<?> kind = field.getType();
                    if (kind != Path.class && kind != String.class && kind != URI.class) {
                        continue;
                    }
                    field.setAccessible(true);
                    Object value = field.get(stream);
                    if (value != null && !value.toString().isEmpty()) {
                        return value.toString();
                    }
                } catch (ReflectiveOperationException | RuntimeException e) {
                    // not this field
                }
            }
        }
        return null;
    }

    /** The stream {@code stream} wraps, or null. */
    private static Object wrapped(Object stream) {
        if (stream instanceof FSDataInputStream wrapper) {
            return wrapper.getWrappedStream();
        }
        if (stream instanceof FilterInputStream) {
            try {
                Field in = FilterInputStream.class.getDeclaredField("in");
                in.setAccessible(true);
                return in.get(stream);
            } catch (ReflectiveOperationException | RuntimeException e) {
                return null;
            }
        }
        return null;
    }
}
