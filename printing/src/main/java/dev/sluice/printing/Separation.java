package dev.sluice.printing;

/**
 * Colour separation, RGB to CMYK, with grey-component replacement: the grey that cyan, magenta and
 * yellow would print together is printed partly with black instead, which uses less ink and keeps
 * neutrals neutral when the three colour inks drift apart.
 */
final class Separation {

    /** Below this grey component (20 %), black would speckle light tones: they keep CMY only. */
    private static final int BLACK_START = 51;

    /**
     * Black generation: the black printed for a grey component, 0 up to {@link #BLACK_START}, then
     * rising along t^1.5 to full black, never above the grey component itself.
     */
    private static final int[] BLACK = new int[256];

    /**
     * Undercolour removal: how much of each colour ink the black replaces. All of it in the
     * midtones, less toward the deepest shadows and none at full black: black ink alone prints a
     * weak, greyish black, and the colour inks under it make a press's rich black. The ink limit
     * then decides how much of them the paper takes.
     */
    private static final int[] REMOVAL = new int[256];

    static {
        for (int grey = BLACK_START + 1; grey < 256; grey++) {
            double t = (grey - BLACK_START) / (255.0 - BLACK_START);
            BLACK[grey] = (int) Math.round(255 * t * Math.sqrt(t));
            REMOVAL[grey] = BLACK[grey] * (255 - grey) / (255 - BLACK_START);
        }
    }

    private Separation() {}

    static int cmyk(int rgb) {
        int c = 255 - ((rgb >> 16) & 0xff);
        int m = 255 - ((rgb >> 8) & 0xff);
        int y = 255 - (rgb & 0xff);
        int grey = Math.min(c, Math.min(m, y));
        int removal = REMOVAL[grey];
        return Cmyk.pack(c - removal, m - removal, y - removal, BLACK[grey]);
    }
}
