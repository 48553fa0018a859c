package dev.sluice.printing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChannelImagesTest {

    private static final int WIDTH = 50;
    private static final int HEIGHT = 30;

    @TempDir Path dir;

    @Test
    void aChannelShowsItsInkDarkOnWhite() throws IOException {
        byte[] raster = new byte[WIDTH * HEIGHT];
        raster[0] = (byte) 255;
        raster[WIDTH + 1] = 85;
        Path file = dir.resolve("cyan.png");
        ChannelImages.writeChannelPng(file, raster, WIDTH, HEIGHT);
        BufferedImage image = ImageIO.read(file.toFile());
        assertThat(image.getWidth()).isEqualTo(WIDTH);
        assertThat(image.getHeight()).isEqualTo(HEIGHT);
        assertThat(image.getRaster().getSample(0, 0, 0)).isEqualTo(0);
        assertThat(image.getRaster().getSample(1, 1, 0)).isEqualTo(170);
        assertThat(image.getRaster().getSample(2, 0, 0)).isEqualTo(255);
    }

    @Test
    void theCompositeAveragesBlocksOnWhitePaper() throws IOException {
        Map<Channel, byte[]> rasters = new EnumMap<>(Channel.class);
        for (Channel channel : Channel.values()) {
            rasters.put(channel, new byte[WIDTH * HEIGHT]);
        }
        // Cyan everywhere on the left half, every other dot in the top left block; black in
        // the bottom right corner.
        for (int y = 0; y < HEIGHT; y++) {
            for (int x = 0; x < WIDTH / 2; x++) {
                rasters.get(Channel.CYAN)[y * WIDTH + x] =
                        (byte) (y < 10 && x < 10 && (x + y) % 2 == 1 ? 0 : 255);
            }
        }
        rasters.get(Channel.BLACK)[WIDTH * HEIGHT - 1] = (byte) 255;
        Path file = dir.resolve("composite.png");
        ChannelImages.writeCompositePng(file, rasters, WIDTH, HEIGHT, 8);
        BufferedImage image = ImageIO.read(file.toFile());
        // Blocks of 7 × 7 dots: 50 × 30 shrinks to 8 × 5.
        assertThat(image.getWidth()).isEqualTo(8);
        assertThat(image.getHeight()).isEqualTo(5);
        assertThat(image.getRGB(2, 2) & 0xffffff).isEqualTo(0x00ffff);
        assertThat(image.getRGB(6, 1) & 0xffffff).isEqualTo(0xffffff);
        // Half the dots of the first block carry no cyan: half the red light comes back.
        assertThat((image.getRGB(0, 0) >> 16) & 0xff).isBetween(120, 135);
        // The last block is 1 × 2 dots, one of them black.
        assertThat(image.getRGB(7, 4) & 0xffffff).isEqualTo(0x808080);
    }

    @Test
    void rastersOfTheWrongSizeOrMissingAreRefused() {
        assertThatThrownBy(
                        () ->
                                ChannelImages.writeChannelPng(
                                        dir.resolve("x.png"), new byte[10], WIDTH, HEIGHT))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("10 bytes");
        Map<Channel, byte[]> three = new EnumMap<>(Channel.class);
        three.put(Channel.CYAN, new byte[WIDTH * HEIGHT]);
        assertThatThrownBy(
                        () ->
                                ChannelImages.writeCompositePng(
                                        dir.resolve("y.png"), three, WIDTH, HEIGHT, 10))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("MAGENTA");
    }
}
