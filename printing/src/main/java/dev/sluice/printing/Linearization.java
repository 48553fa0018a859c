package dev.sluice.printing;

/**
 * Per-channel linearization: ink spreads on paper (dot gain), so a 50 % raster prints darker than
 * 50 %. Each channel's curve asks for a little less ink in the midtones so the printed tone comes
 * out as the separation meant it. The model is the usual parabola, printed = v + 4g·v(1 − v) with
 * the channel's gain g at 50 %; the curve is its inverse, tabulated once.
 */
final class Linearization {

    /** Dot gain at 50 %, in the {@link Channel} order; black ink spreads most. */
    private static final double[] GAIN = {0.14, 0.14, 0.12, 0.17};

    /** The four curves end to end, 256 entries each: one array, one bounds check per lookup. */
    private static final int[] CURVES = curves();

    private Linearization() {}

    static int apply(int cmyk) {
        return Cmyk.pack(
                CURVES[Cmyk.level(cmyk, 0)],
                CURVES[256 + Cmyk.level(cmyk, 1)],
                CURVES[512 + Cmyk.level(cmyk, 2)],
                CURVES[768 + Cmyk.level(cmyk, 3)]);
    }

    private static int[] curves() {
        int[] curves = new int[GAIN.length * 256];
        for (int channel = 0; channel < GAIN.length; channel++) {
            double g = GAIN[channel];
            for (int level = 0; level < 256; level++) {
                double v = level / 255.0;
                // The root of 4g·u² − (1 + 4g)·u + v = 0 that lies in [0, 1].
                double b = 1 + 4 * g;
                double u = (b - Math.sqrt(b * b - 16 * g * v)) / (8 * g);
                curves[channel * 256 + level] = (int) Math.round(255 * u);
            }
        }
        return curves;
    }
}
