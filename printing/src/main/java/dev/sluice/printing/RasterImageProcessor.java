package dev.sluice.printing;

import java.awt.image.BufferedImage;
import java.util.Objects;

/**
 * The RIP of docs/printing.md for one input image printed on a sheet of {@code widthPx × heightPx}
 * dots: it scales the image to the sheet, separates it into CMYK with black generation, linearizes
 * each ink, limits the total ink and halftones each channel into drop sizes.
 *
 * <p>A dot's value is a pure function of (channel, x, y): no stage looks at a neighbour's result
 * (ordered dither, unlike error diffusion, needs none). Any producer can therefore compute any rows
 * of any channel, in any order, and they come out identical whoever computes them, which is what
 * lets Sluice cut a channel into tasks and recompute a task after a failure. The price is that a
 * channel's row computes all four inks, because of the ink limit.
 *
 * <p>Thread-safe: after construction nothing is written but the caller's buffers.
 */
public final class RasterImageProcessor {

    /** Fixed-point fractions of the scaler, in 256ths of a source pixel. */
    private static final int ONE = 256;

    private final int[] pixels;
    private final int sourceWidth;
    private final int sourceHeight;
    private final int widthPx;
    private final int heightPx;

    /**
     * For each sheet column, the source column on its left and its right, and the right's weight.
     */
    private final int[] left;

    private final int[] right;
    private final int[] rightWeight;

    public RasterImageProcessor(BufferedImage input, int widthPx, int heightPx) {
        Objects.requireNonNull(input, "input");
        if (widthPx < 1 || heightPx < 1) {
            throw new IllegalArgumentException(
                    "the sheet must be at least 1 × 1 dots, got " + widthPx + " × " + heightPx);
        }
        this.sourceWidth = input.getWidth();
        this.sourceHeight = input.getHeight();
        this.pixels = input.getRGB(0, 0, sourceWidth, sourceHeight, null, 0, sourceWidth);
        this.widthPx = widthPx;
        this.heightPx = heightPx;
        this.left = new int[widthPx];
        this.right = new int[widthPx];
        this.rightWeight = new int[widthPx];
        for (int x = 0; x < widthPx; x++) {
            int position = sourcePosition(x, widthPx, sourceWidth);
            left[x] = position / ONE;
            right[x] = Math.min(left[x] + 1, sourceWidth - 1);
            rightWeight[x] = position % ONE;
        }
    }

    public int widthPx() {
        return widthPx;
    }

    public int heightPx() {
        return heightPx;
    }

    /** Computes row {@code y} of {@code channel}: {@link #widthPx()} bytes into {@code out}. */
    public void row(Channel channel, int y, byte[] out, int offset) {
        checkRow(y);
        Objects.checkFromIndexSize(offset, widthPx, out.length);
        int position = sourcePosition(y, heightPx, sourceHeight);
        int top = topRow(position);
        int bottom = bottomRow(position);
        int bottomWeight = position % ONE;
        int ordinal = channel.ordinal();
        int[] screen = Halftone.screen(channel);
        int screenRow = (y & (Halftone.SIDE - 1)) * Halftone.SIDE;
        for (int x = 0; x < widthPx; x++) {
            int rgb = scale(top, bottom, bottomWeight, x);
            int level = Cmyk.level(contone(rgb), ordinal);
            out[offset + x] = Halftone.drop(level, screen[screenRow + (x & (Halftone.SIDE - 1))]);
        }
    }

    /** The contone levels of dot (x, y) before halftoning: cyan, magenta, yellow, black. */
    int[] contone(int x, int y) {
        checkRow(y);
        Objects.checkIndex(x, widthPx);
        int position = sourcePosition(y, heightPx, sourceHeight);
        int cmyk = contone(scale(topRow(position), bottomRow(position), position % ONE, x));
        int[] levels = new int[Channel.values().length];
        for (Channel channel : Channel.values()) {
            levels[channel.ordinal()] = Cmyk.level(cmyk, channel);
        }
        return levels;
    }

    private static int contone(int rgb) {
        return InkLimit.apply(Linearization.apply(Separation.cmyk(rgb)));
    }

    /**
     * Bilinear scaling: the colour at sheet column x between source rows {@code top} and {@code
     * bottom} (offsets into the pixels), weighted by {@code bottomWeight} 256ths toward the bottom.
     */
    private int scale(int top, int bottom, int bottomWeight, int x) {
        int l = left[x];
        int r = right[x];
        int rw = rightWeight[x];
        int topLeft = pixels[top + l];
        int topRight = pixels[top + r];
        int bottomLeft = pixels[bottom + l];
        int bottomRight = pixels[bottom + r];
        return (blend(topLeft, topRight, bottomLeft, bottomRight, rw, bottomWeight, 16) << 16)
                | (blend(topLeft, topRight, bottomLeft, bottomRight, rw, bottomWeight, 8) << 8)
                | blend(topLeft, topRight, bottomLeft, bottomRight, rw, bottomWeight, 0);
    }

    private static int blend(
            int topLeft,
            int topRight,
            int bottomLeft,
            int bottomRight,
            int rightWeight,
            int bottomWeight,
            int shift) {
        int upper =
                ((topLeft >> shift) & 0xff) * (ONE - rightWeight)
                        + ((topRight >> shift) & 0xff) * rightWeight;
        int lower =
                ((bottomLeft >> shift) & 0xff) * (ONE - rightWeight)
                        + ((bottomRight >> shift) & 0xff) * rightWeight;
        return (upper * (ONE - bottomWeight) + lower * bottomWeight + ONE * ONE / 2) >> 16;
    }

    /** The offset of the source row above a position from {@link #sourcePosition}. */
    private int topRow(int position) {
        return position / ONE * sourceWidth;
    }

    /** The offset of the source row below it, the last row for the image's bottom edge. */
    private int bottomRow(int position) {
        return Math.min(position / ONE + 1, sourceHeight - 1) * sourceWidth;
    }

    /**
     * Where the centre of sheet dot {@code i} of {@code sheet} falls among {@code source} pixels'
     * centres, in 256ths, clamped to the image: integer arithmetic, so every JVM agrees.
     */
    private static int sourcePosition(int i, int sheet, int source) {
        long position = ((2L * i + 1) * source * ONE) / (2L * sheet) - ONE / 2;
        return (int) Math.max(0, Math.min(position, (long) (source - 1) * ONE));
    }

    private void checkRow(int y) {
        if (y < 0 || y >= heightPx) {
            throw new IndexOutOfBoundsException(
                    "row " + y + " of a sheet of " + heightPx + " rows");
        }
    }
}
