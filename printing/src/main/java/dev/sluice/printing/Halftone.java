package dev.sluice.printing;

/**
 * Multi-level ordered dither: an inkjet head fires no drop or a small, medium or large one, so a
 * contone level 0-255 becomes one of four drop sizes, written as the bytes 0, 85, 170 and 255. A
 * level between two drop sizes picks the larger one at the dots where it passes the threshold of a
 * 16 × 16 Bayer matrix, so an area keeps its tone on average.
 *
 * <p>Each channel reads the matrix turned and shifted its own way: with one matrix for all, the
 * inks' drops would land on the same dots, and the slightest misregistration between heads would
 * shift colours in bands (moiré).
 */
final class Halftone {

    /** The matrix's side: a power of two, so a dot finds its threshold with a mask. */
    static final int SIDE = 16;

    /** Steps between drop sizes: none to small, small to medium, medium to large. */
    private static final int STEPS = 3;

    private static final int DROP_STEP = 255 / STEPS;

    /** What each 2 × 2 quadrant adds to the ranks of the matrix half its side. */
    private static final int[] QUADRANT_RANK = {0, 2, 3, 1};

    /** The smaller drop size of a level's interval, as a byte value. */
    private static final int[] LOWER = new int[256];

    /** How far a level lies past its lower drop size, 0-254: it is compared with the threshold. */
    private static final int[] PAST = new int[256];

    private static final int[][] SCREENS = new int[Channel.values().length][];

    static {
        for (int level = 0; level < 256; level++) {
            int scaled = level * STEPS;
            LOWER[level] = scaled / 255 * DROP_STEP;
            PAST[level] = scaled % 255;
        }
        int[] bayer = bayer();
        for (Channel channel : Channel.values()) {
            int[] screen = new int[SIDE * SIDE];
            for (int y = 0; y < SIDE; y++) {
                for (int x = 0; x < SIDE; x++) {
                    // Thresholds spread evenly over 0-254, so a level 255 × j / 256 past its
                    // lower drop size takes the larger one at about j of the 256 dots.
                    screen[y * SIDE + x] = (2 * bayer[index(channel, x, y)] + 1) * 255 / 512;
                }
            }
            SCREENS[channel.ordinal()] = screen;
        }
    }

    private Halftone() {}

    /** The thresholds of {@code channel}: row-major, rows of {@link #SIDE}. */
    static int[] screen(Channel channel) {
        return SCREENS[channel.ordinal()];
    }

    /** The drop at a dot of that level whose threshold is {@code threshold}, as its byte. */
    static byte drop(int level, int threshold) {
        // (threshold − past) is negative exactly when the level passes the threshold.
        return (byte) (LOWER[level] + ((threshold - PAST[level]) >>> 31) * DROP_STEP);
    }

    /** Where {@code channel}'s dot (x, y) reads the matrix: a quarter turn or a mirror, shifted. */
    private static int index(Channel channel, int x, int y) {
        int last = SIDE - 1;
        switch (channel) {
            case CYAN:
                return y * SIDE + x;
            case MAGENTA:
                return ((x + 8) & last) * SIDE + y;
            case YELLOW:
                return ((y + 4) & last) * SIDE + ((last - x + 4) & last);
            default:
                return ((x + 12) & last) * SIDE + (last - y);
        }
    }

    /** The 16 × 16 Bayer matrix, ranks 0-255 row-major, each 2 × 2 step spreading the last. */
    private static int[] bayer() {
        int[] matrix = {0};
        for (int side = 1; side < SIDE; side *= 2) {
            int[] next = new int[4 * side * side];
            for (int y = 0; y < 2 * side; y++) {
                for (int x = 0; x < 2 * side; x++) {
                    int quadrant = (y / side) * 2 + (x / side);
                    next[y * 2 * side + x] =
                            4 * matrix[(y % side) * side + (x % side)] + QUADRANT_RANK[quadrant];
                }
            }
            matrix = next;
        }
        return matrix;
    }
}
