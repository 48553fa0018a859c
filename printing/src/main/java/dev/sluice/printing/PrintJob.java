package dev.sluice.printing;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A print job of docs/printing.md's presets: a sheet and the resolution it is printed at. Its
 * raster holds one byte per dot and per ink channel, so {@link #channelBytes()} is the volume of
 * one channel's stream.
 *
 * @param name the preset it comes from, such as {@code B} or {@code B/8}
 * @param useCase what such a job prints
 * @param sheetWidthInches the sheet's width
 * @param sheetHeightInches the sheet's height
 * @param dpi dots per inch, the same across and along the sheet
 */
public record PrintJob(
        String name, String useCase, double sheetWidthInches, double sheetHeightInches, int dpi) {

    public static final PrintJob A = new PrintJob("A", "low quality packaging", 10, 10, 300);
    public static final PrintJob B = new PrintJob("B", "standard quality poster", 40, 40, 900);
    public static final PrintJob C = new PrintJob("C", "very high quality banner", 100, 100, 1200);

    private static final Pattern PRESET = Pattern.compile("([ABC])(?:/([0-9]{1,9}))?");

    public PrintJob {
        if (dpi < 1) {
            throw new IllegalArgumentException(
                    "print job " + name + ": dpi must be positive, got " + dpi);
        }
        checkPixels(name, "width", sheetWidthInches, dpi);
        checkPixels(name, "height", sheetHeightInches, dpi);
    }

    private static void checkPixels(String name, String side, double inches, int dpi) {
        long px = Math.round(inches * dpi);
        if (px < 1 || px > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(
                    "print job "
                            + name
                            + ": the sheet's "
                            + side
                            + " of "
                            + inches
                            + " in at "
                            + dpi
                            + " dpi must make 1 to "
                            + Integer.MAX_VALUE
                            + " dots");
        }
    }

    /**
     * The preset of that name: {@code A}, {@code B} or {@code C}, optionally followed by {@code
     * /divisor} for the same sheet at a lower resolution (see {@link #scaled}).
     */
    public static PrintJob preset(String name) {
        Matcher m = PRESET.matcher(name == null ? "" : name);
        if (!m.matches()) {
            throw new IllegalArgumentException(
                    "unknown print job '"
                            + name
                            + "': expected A, B or C, optionally with a resolution divisor such as"
                            + " B/8");
        }
        PrintJob job =
                switch (m.group(1)) {
                    case "A" -> A;
                    case "B" -> B;
                    default -> C;
                };
        return m.group(2) == null ? job : job.scaled(Integer.parseInt(m.group(2)));
    }

    /**
     * The same sheet at {@code dpi / divisor} (rounded down: B/8 prints at 112 dpi), named after
     * this job and the divisor. It keeps the job's shape at a volume a laptop can stream.
     */
    public PrintJob scaled(int divisor) {
        if (divisor < 1 || divisor > dpi) {
            throw new IllegalArgumentException(
                    "print job "
                            + name
                            + ": the resolution divisor must be between 1 and "
                            + dpi
                            + ", got "
                            + divisor);
        }
        return divisor == 1
                ? this
                : new PrintJob(
                        name + "/" + divisor,
                        useCase,
                        sheetWidthInches,
                        sheetHeightInches,
                        dpi / divisor);
    }

    public int widthPx() {
        return (int) Math.round(sheetWidthInches * dpi);
    }

    public int heightPx() {
        return (int) Math.round(sheetHeightInches * dpi);
    }

    /** The bytes of one channel's raster: one byte per dot. */
    public long channelBytes() {
        return (long) widthPx() * heightPx();
    }
}
