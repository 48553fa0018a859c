package dev.sluice.printing;

import java.awt.image.BufferedImage;
import java.awt.image.DataBufferByte;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import javax.imageio.ImageIO;

/** Rasters as PNGs a person can look at: one channel as it prints, or all four as a preview. */
public final class ChannelImages {

    private ChannelImages() {}

    /** One channel at full size, grey: ink dark on white paper, as the sheet would show it. */
    public static void writeChannelPng(Path file, byte[] raster, int widthPx, int heightPx)
            throws IOException {
        checkSize("the raster", raster, widthPx, heightPx);
        BufferedImage image = new BufferedImage(widthPx, heightPx, BufferedImage.TYPE_BYTE_GRAY);
        byte[] grey = ((DataBufferByte) image.getRaster().getDataBuffer()).getData();
        for (int i = 0; i < grey.length; i++) {
            grey[i] = (byte) (255 - (raster[i] & 0xff));
        }
        write(image, file);
    }

    /**
     * The four channels printed together on white paper, shrunk to at most {@code maxSidePx} per
     * side: each preview pixel averages the ink of its block of dots, which also undoes the
     * halftone, as the eye does at a distance.
     */
    public static void writeCompositePng(
            Path file, Map<Channel, byte[]> rasters, int widthPx, int heightPx, int maxSidePx)
            throws IOException {
        if (maxSidePx < 1) {
            throw new IllegalArgumentException("maxSidePx must be positive, got " + maxSidePx);
        }
        byte[][] inks = new byte[Channel.values().length][];
        for (Channel channel : Channel.values()) {
            byte[] raster = rasters.get(channel);
            if (raster == null) {
                throw new IllegalArgumentException("no raster for channel " + channel);
            }
            checkSize("the " + channel.streamName() + " raster", raster, widthPx, heightPx);
            inks[channel.ordinal()] = raster;
        }
        int block = (Math.max(widthPx, heightPx) + maxSidePx - 1) / maxSidePx;
        int previewWidth = (widthPx + block - 1) / block;
        int previewHeight = (heightPx + block - 1) / block;
        BufferedImage image =
                new BufferedImage(previewWidth, previewHeight, BufferedImage.TYPE_INT_RGB);
        long[][] sums = new long[inks.length][previewWidth];
        int[] row = new int[previewWidth];
        for (int py = 0; py < previewHeight; py++) {
            int y0 = py * block;
            int y1 = Math.min(heightPx, y0 + block);
            for (int ink = 0; ink < inks.length; ink++) {
                Arrays.fill(sums[ink], 0);
                for (int y = y0; y < y1; y++) {
                    int start = y * widthPx;
                    for (int x = 0; x < widthPx; x++) {
                        sums[ink][x / block] += inks[ink][start + x] & 0xff;
                    }
                }
            }
            for (int px = 0; px < previewWidth; px++) {
                long dots = (long) (y1 - y0) * (Math.min(widthPx, (px + 1) * block) - px * block);
                row[px] =
                        paper(
                                (int) (sums[0][px] / dots),
                                (int) (sums[1][px] / dots),
                                (int) (sums[2][px] / dots),
                                (int) (sums[3][px] / dots));
            }
            image.setRGB(0, py, previewWidth, 1, row, 0, previewWidth);
        }
        write(image, file);
    }

    /**
     * The colour of white paper under these ink coverages: each colour ink absorbs its complement,
     * black absorbs everything.
     */
    private static int paper(int c, int m, int y, int k) {
        int white = 255 - k;
        return (absorb(c, white) << 16) | (absorb(m, white) << 8) | absorb(y, white);
    }

    private static int absorb(int ink, int light) {
        return ((255 - ink) * light + 127) / 255;
    }

    private static void checkSize(String what, byte[] raster, int widthPx, int heightPx) {
        if (widthPx < 1 || heightPx < 1 || raster.length != (long) widthPx * heightPx) {
            throw new IllegalArgumentException(
                    what
                            + " has "
                            + raster.length
                            + " bytes, not one per dot of "
                            + widthPx
                            + " × "
                            + heightPx);
        }
    }

    private static void write(BufferedImage image, Path file) throws IOException {
        if (!ImageIO.write(image, "png", file.toFile())) {
            throw new IOException("no PNG writer for " + file);
        }
    }
}
