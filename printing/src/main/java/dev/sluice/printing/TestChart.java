package dev.sluice.printing;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.imageio.ImageIO;

/**
 * The demo's input image, drawn pixel by pixel so that every JVM makes the same one: a hue chart
 * from white through full saturation to black, saturated patches, a grey ramp, and overlapping
 * additive and subtractive circles. Its dark colours exercise black generation, its saturated ones
 * the ink limit.
 */
public final class TestChart {

    public static final int SIZE = 640;
    public static final String FILE_NAME = "test-chart.png";

    private static final int HUE_BOTTOM = 320;
    private static final int PATCHES_BOTTOM = 400;
    private static final int RAMP_BOTTOM = 448;
    private static final int STEPS_BOTTOM = 480;
    private static final int[] PATCHES = {
        0xff0000, 0x00ff00, 0x0000ff, 0x00ffff, 0xff00ff, 0xffff00, 0x000000, 0x804020
    };
    private static final double RADIUS = 48;

    private TestChart() {}

    public static BufferedImage create() {
        BufferedImage image = new BufferedImage(SIZE, SIZE, BufferedImage.TYPE_INT_RGB);
        int[] row = new int[SIZE];
        for (int y = 0; y < SIZE; y++) {
            for (int x = 0; x < SIZE; x++) {
                row[x] = pixel(x, y);
            }
            image.setRGB(0, y, SIZE, 1, row, 0, SIZE);
        }
        return image;
    }

    /** Writes the chart as {@value #FILE_NAME} in {@code dir} and returns its path. */
    public static Path write(Path dir) {
        Path file = dir.resolve(FILE_NAME);
        try {
            Files.createDirectories(dir);
            if (!ImageIO.write(create(), "png", file.toFile())) {
                throw new IOException("no PNG writer");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the test chart to " + file, e);
        }
        return file;
    }

    private static int pixel(int x, int y) {
        if (y < HUE_BOTTOM) {
            return hueChart(x, y);
        }
        if (y < PATCHES_BOTTOM) {
            return PATCHES[x * PATCHES.length / SIZE];
        }
        if (y < RAMP_BOTTOM) {
            return grey(x * 255 / (SIZE - 1));
        }
        if (y < STEPS_BOTTOM) {
            return grey(x * 16 / SIZE * 17);
        }
        return x < SIZE / 2 ? additiveCircles(x, y) : subtractiveCircles(x - SIZE / 2, y);
    }

    /** Hue across; down, from white to the saturated hue at mid-height, then to black. */
    private static int hueChart(int x, int y) {
        int hue = hue(x * 6.0 / SIZE);
        int half = HUE_BOTTOM / 2;
        int r = (hue >> 16) & 0xff;
        int g = (hue >> 8) & 0xff;
        int b = hue & 0xff;
        if (y < half) {
            int white = (half - 1 - y) * 255 / (half - 1);
            return rgb(mix(r, 255, white), mix(g, 255, white), mix(b, 255, white));
        }
        int black = (y - half) * 255 / (half - 1);
        return rgb(mix(r, 0, black), mix(g, 0, black), mix(b, 0, black));
    }

    /**
     * The saturated colour of {@code sextant} ∈ [0, 6): red, yellow, green, cyan, blue, magenta.
     */
    private static int hue(double sextant) {
        int rising = (int) Math.round((sextant - Math.floor(sextant)) * 255);
        int falling = 255 - rising;
        switch ((int) sextant) {
            case 0:
                return rgb(255, rising, 0);
            case 1:
                return rgb(falling, 255, 0);
            case 2:
                return rgb(0, 255, rising);
            case 3:
                return rgb(0, falling, 255);
            case 4:
                return rgb(rising, 0, 255);
            default:
                return rgb(255, 0, falling);
        }
    }

    /** Red, green and blue lights on black: where they overlap, they add up to white. */
    private static int additiveCircles(int x, int y) {
        return rgb(
                coverage(x, y, 0) * 255 / 256,
                coverage(x, y, 1) * 255 / 256,
                coverage(x, y, 2) * 255 / 256);
    }

    /** Cyan, magenta and yellow inks on white: where they overlap, they make black. */
    private static int subtractiveCircles(int x, int y) {
        return rgb(
                255 - coverage(x, y, 0) * 255 / 256,
                255 - coverage(x, y, 1) * 255 / 256,
                255 - coverage(x, y, 2) * 255 / 256);
    }

    /**
     * How much of the pixel circle {@code i} of three covers, in 256ths: the distance to its edge
     * across one pixel, so the edges are smooth.
     */
    private static int coverage(int x, int y, int i) {
        double cx = SIZE / 4.0 + (i == 0 ? 0 : i == 1 ? -30 : 30);
        double cy = (STEPS_BOTTOM + SIZE) / 2.0 + (i == 0 ? -24 : 20);
        double d = Math.hypot(x + 0.5 - cx, y + 0.5 - cy);
        return (int) Math.round(Math.max(0, Math.min(1, RADIUS + 0.5 - d)) * 256);
    }

    private static int mix(int value, int toward, int weight) {
        return value + (toward - value) * weight / 255;
    }

    private static int grey(int level) {
        return rgb(level, level, level);
    }

    private static int rgb(int r, int g, int b) {
        return (r << 16) | (g << 8) | b;
    }
}
