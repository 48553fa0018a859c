package dev.sluice.printing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.awt.image.BufferedImage;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class RasterImageProcessorTest {

    private static final RasterImageProcessor CHART =
            new RasterImageProcessor(TestChart.create(), 301, 257);

    @Test
    void dotsAreDropSizesOnly() {
        int[] counts = new int[256];
        byte[] row = new byte[CHART.widthPx()];
        for (Channel channel : Channel.values()) {
            for (int y = 0; y < CHART.heightPx(); y++) {
                CHART.row(channel, y, row, 0);
                for (byte dot : row) {
                    counts[dot & 0xff]++;
                }
            }
        }
        for (int value = 0; value < 256; value++) {
            if (value % 85 == 0) {
                assertThat(counts[value]).as("dots of %d", value).isPositive();
            } else {
                assertThat(counts[value]).as("dots of %d", value).isZero();
            }
        }
    }

    @Test
    void totalInkStaysWithinTheLimitWhichBinds() {
        int most = 0;
        for (int y = 0; y < CHART.heightPx(); y++) {
            for (int x = 0; x < CHART.widthPx(); x++) {
                int total = Arrays.stream(CHART.contone(x, y)).sum();
                assertThat(total).as("ink at (%d, %d)", x, y).isLessThanOrEqualTo(InkLimit.LIMIT);
                most = Math.max(most, total);
            }
        }
        assertThat(InkLimit.LIMIT).isEqualTo(714);
        assertThat(most).isGreaterThanOrEqualTo(InkLimit.LIMIT - 3);
    }

    @Test
    void theInkLimitTakesFromTheColoursInProportionAndKeepsBlack() {
        // A blue so dark that black generation leaves the colour inks nearly full under the black.
        int[] levels = pixel(0x000010).contone(0, 0);
        assertThat(levels[Channel.CYAN.ordinal()]).isEqualTo(levels[Channel.MAGENTA.ordinal()]);
        assertThat(levels[Channel.CYAN.ordinal()])
                .isLessThan(255)
                .isGreaterThan(levels[Channel.YELLOW.ordinal()]);
        assertThat(levels[Channel.BLACK.ordinal()]).isPositive();
        assertThat(Arrays.stream(levels).sum()).isBetween(InkLimit.LIMIT - 3, InkLimit.LIMIT);
    }

    @Test
    void whitePaperGetsNoInk() {
        RasterImageProcessor white = pixel(0xffffff);
        byte[] row = new byte[white.widthPx()];
        for (Channel channel : Channel.values()) {
            for (int y = 0; y < white.heightPx(); y++) {
                white.row(channel, y, row, 0);
                assertThat(row).containsOnly(0);
            }
        }
    }

    @Test
    void blackIsSolidBlackInkOverColourInksCutByTheLimit() {
        RasterImageProcessor black = pixel(0x000000);
        assertThat(average(black, Channel.BLACK)).isEqualTo(255);
        int colour = (InkLimit.LIMIT - 255) / 3;
        for (Channel ink : new Channel[] {Channel.CYAN, Channel.MAGENTA, Channel.YELLOW}) {
            assertThat(black.contone(0, 0)[ink.ordinal()]).as("%s", ink).isEqualTo(colour);
            assertThat(average(black, ink)).as("%s", ink).isCloseTo(colour, within(2.0));
        }
    }

    @Test
    void lightGreysGetNoBlackAndDarkOnesDo() {
        assertThat(pixel(0xd0d0d0).contone(0, 0)[Channel.BLACK.ordinal()]).isZero();
        int[] dark = pixel(0x404040).contone(0, 0);
        assertThat(dark[Channel.BLACK.ordinal()]).isPositive();
        assertThat(dark[Channel.CYAN.ordinal()]).isEqualTo(dark[Channel.MAGENTA.ordinal()]);
    }

    @Test
    void theHalftoneKeepsTheToneOnAverage() {
        RasterImageProcessor grey = pixel(0x999999);
        for (Channel channel : Channel.values()) {
            int level = grey.contone(0, 0)[channel.ordinal()];
            assertThat(average(grey, channel)).as("%s", channel).isCloseTo(level, within(2.0));
        }
    }

    @Test
    void channelsUseDifferentScreens() {
        RasterImageProcessor grey = pixel(0x999999);
        byte[] cyan = new byte[grey.widthPx()];
        byte[] magenta = new byte[grey.widthPx()];
        grey.row(Channel.CYAN, 0, cyan, 0);
        grey.row(Channel.MAGENTA, 0, magenta, 0);
        assertThat(grey.contone(0, 0)[Channel.CYAN.ordinal()])
                .isEqualTo(grey.contone(0, 0)[Channel.MAGENTA.ordinal()]);
        assertThat(cyan).isNotEqualTo(magenta);
    }

    @Test
    void aRowIsTheSameInAnyOrderAtAnyOffset() {
        byte[] first = new byte[CHART.widthPx()];
        CHART.row(Channel.YELLOW, 100, first, 0);
        byte[] elsewhere = new byte[CHART.widthPx() + 7];
        CHART.row(Channel.BLACK, 3, elsewhere, 7);
        CHART.row(Channel.YELLOW, 99, elsewhere, 7);
        RasterImageProcessor again = new RasterImageProcessor(TestChart.create(), 301, 257);
        again.row(Channel.YELLOW, 100, elsewhere, 7);
        assertThat(Arrays.copyOfRange(elsewhere, 7, elsewhere.length)).isEqualTo(first);
    }

    @Test
    void theImageIsScaledToTheSheet() {
        // Left half red, right half blue, enlarged 10 times: magenta everywhere, yellow on the
        // left only, blended across the middle.
        BufferedImage image = new BufferedImage(4, 2, BufferedImage.TYPE_INT_RGB);
        for (int y = 0; y < 2; y++) {
            for (int x = 0; x < 4; x++) {
                image.setRGB(x, y, x < 2 ? 0xff0000 : 0x0000ff);
            }
        }
        RasterImageProcessor rip = new RasterImageProcessor(image, 40, 20);
        int yellow = Channel.YELLOW.ordinal();
        assertThat(rip.contone(0, 0)[yellow]).isEqualTo(rip.contone(14, 19)[yellow]).isPositive();
        assertThat(rip.contone(25, 10)[yellow]).isZero();
        assertThat(rip.contone(20, 10)[yellow]).isStrictlyBetween(0, rip.contone(0, 0)[yellow]);
    }

    @Test
    void rowsOutsideTheSheetAreRefused() {
        byte[] row = new byte[CHART.widthPx()];
        assertThatThrownBy(() -> CHART.row(Channel.CYAN, CHART.heightPx(), row, 0))
                .isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> CHART.row(Channel.CYAN, 0, row, 1))
                .isInstanceOf(IndexOutOfBoundsException.class);
    }

    /** A sheet of 64 × 48 dots printed from a one-colour image. */
    private static RasterImageProcessor pixel(int rgb) {
        BufferedImage image = new BufferedImage(1, 1, BufferedImage.TYPE_INT_RGB);
        image.setRGB(0, 0, rgb);
        return new RasterImageProcessor(image, 64, 48);
    }

    private static double average(RasterImageProcessor rip, Channel channel) {
        byte[] row = new byte[rip.widthPx()];
        long sum = 0;
        for (int y = 0; y < rip.heightPx(); y++) {
            rip.row(channel, y, row, 0);
            for (byte dot : row) {
                sum += dot & 0xff;
            }
        }
        return (double) sum / ((long) rip.widthPx() * rip.heightPx());
    }
}
