package dev.sluice.printing;

import java.io.InputStream;
import java.util.Objects;

/**
 * Bytes {@code [start, end)} of a channel's raster in row-major order, made row by row as they are
 * read: a task holds one row, never the whole task, however long it is. Skipping computes nothing,
 * so a task resumed past its delivered chunks only computes what it still sends.
 */
final class RasterStream extends InputStream {

    /** The rows of one channel's raster. */
    interface Rows {
        /** Row {@code y}; the array may be reused by the next call. */
        byte[] row(int y);
    }

    private final Rows rows;
    private final int width;
    private final long end;
    private long position;
    private byte[] row;
    private int rowY = -1;

    RasterStream(Rows rows, int width, long start, long end) {
        this.rows = rows;
        this.width = width;
        this.position = start;
        this.end = end;
    }

    @Override
    public int read() {
        if (position >= end) {
            return -1;
        }
        int y = (int) (position / width);
        int value = rowAt(y)[(int) (position - (long) y * width)] & 0xff;
        position++;
        return value;
    }

    @Override
    public int read(byte[] b, int off, int len) {
        Objects.checkFromIndexSize(off, len, b.length);
        if (len == 0) {
            return 0;
        }
        if (position >= end) {
            return -1;
        }
        int copied = 0;
        while (copied < len && position < end) {
            int y = (int) (position / width);
            int x = (int) (position - (long) y * width);
            int n = (int) Math.min(Math.min(len - copied, width - x), end - position);
            System.arraycopy(rowAt(y), x, b, off + copied, n);
            copied += n;
            position += n;
        }
        return copied;
    }

    @Override
    public long skip(long n) {
        long skipped = Math.max(0, Math.min(n, end - position));
        position += skipped;
        return skipped;
    }

    private byte[] rowAt(int y) {
        if (y != rowY) {
            row = rows.row(y);
            rowY = y;
        }
        return row;
    }
}
