package dev.sluice.printing;

/**
 * A contone CMYK pixel packed in an int, one ink level 0-255 per byte (cyan highest, black lowest),
 * so the RIP's stages pass a whole pixel along without allocating.
 */
final class Cmyk {

    private Cmyk() {}

    static int pack(int c, int m, int y, int k) {
        return (c << 24) | (m << 16) | (y << 8) | k;
    }

    static int level(int cmyk, Channel channel) {
        return level(cmyk, channel.ordinal());
    }

    /** The level of the channel of that ordinal: 0 cyan, 1 magenta, 2 yellow, 3 black. */
    static int level(int cmyk, int ordinal) {
        return (cmyk >>> (24 - 8 * ordinal)) & 0xff;
    }
}
