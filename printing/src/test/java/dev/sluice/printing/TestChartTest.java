package dev.sluice.printing;

import static org.assertj.core.api.Assertions.assertThat;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TestChartTest {

    @TempDir Path dir;

    @Test
    void theChartIsWrittenAsTheSameImageEveryTime() throws IOException {
        Path file = TestChart.write(dir.resolve("charts"));
        assertThat(file).isEqualTo(dir.resolve("charts").resolve(TestChart.FILE_NAME));
        BufferedImage read = ImageIO.read(file.toFile());
        BufferedImage made = TestChart.create();
        assertThat(read.getWidth()).isEqualTo(TestChart.SIZE);
        assertThat(read.getHeight()).isEqualTo(TestChart.SIZE);
        for (int y = 0; y < TestChart.SIZE; y++) {
            for (int x = 0; x < TestChart.SIZE; x++) {
                assertThat(read.getRGB(x, y)).isEqualTo(made.getRGB(x, y));
            }
        }
    }

    @Test
    void theChartHoldsPaperWhiteFullBlackAndSaturatedColours() {
        BufferedImage chart = TestChart.create();
        assertThat(chart.getRGB(0, 0) & 0xffffff).isEqualTo(0xffffff);
        assertThat(chart.getRGB(0, 319) & 0xffffff).isEqualTo(0x000000);
        assertThat(chart.getRGB(0, 160) & 0xffffff).isEqualTo(0xff0000);
        assertThat(chart.getRGB(40, 360) & 0xffffff).isEqualTo(0xff0000);
        assertThat(chart.getRGB(500, 360) & 0xffffff).isEqualTo(0x000000);
        assertThat(chart.getRGB(639, 420) & 0xffffff).isEqualTo(0xffffff);
        // Where all three circles overlap: white light on the left, black ink on the right.
        assertThat(chart.getRGB(160, 565) & 0xffffff).isEqualTo(0xffffff);
        assertThat(chart.getRGB(480, 565) & 0xffffff).isEqualTo(0x000000);
    }
}
