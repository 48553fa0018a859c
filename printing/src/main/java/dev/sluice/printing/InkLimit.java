package dev.sluice.printing;

/**
 * The total area coverage limit: paper takes only so much ink before it bleeds or cockles, so the
 * four levels of a pixel together stay at or below {@link #LIMIT}. Black carries the detail and is
 * kept; cyan, magenta and yellow give way in proportion. This is the stage where every channel's
 * value at a pixel depends on all four.
 */
final class InkLimit {

    static final int PERCENT = 280;

    /** {@link #PERCENT} in ink levels: 255 is one channel at 100 %. */
    static final int LIMIT = PERCENT * 255 / 100;

    private InkLimit() {}

    static int apply(int cmyk) {
        int c = Cmyk.level(cmyk, 0);
        int m = Cmyk.level(cmyk, 1);
        int y = Cmyk.level(cmyk, 2);
        int k = Cmyk.level(cmyk, 3);
        int colour = c + m + y;
        if (colour + k <= LIMIT) {
            return cmyk;
        }
        // Black alone is at most 100 %, so some colour is always allowed; rounding down keeps
        // the sum within the limit.
        int allowed = LIMIT - k;
        return Cmyk.pack(c * allowed / colour, m * allowed / colour, y * allowed / colour, k);
    }
}
