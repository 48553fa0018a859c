package dev.sluice.printing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Locale;
import org.junit.jupiter.api.Test;

class PrintJobTest {

    @Test
    void channelVolumesAreThoseOfSeedTable1() {
        assertThat(megabits(PrintJob.A)).isEqualTo("72.0 Mbit");
        assertThat(gigabits(PrintJob.B)).isEqualTo("10.4 Gbit");
        assertThat(gigabits(PrintJob.C)).isEqualTo("115.2 Gbit");
    }

    @Test
    void sheetsInDots() {
        assertThat(PrintJob.A.widthPx()).isEqualTo(3_000);
        assertThat(PrintJob.B.heightPx()).isEqualTo(36_000);
        assertThat(PrintJob.C.channelBytes()).isEqualTo(120_000L * 120_000L);
    }

    @Test
    void presetsByName() {
        assertThat(PrintJob.preset("A")).isSameAs(PrintJob.A);
        assertThat(PrintJob.preset("C")).isSameAs(PrintJob.C);
        PrintJob b8 = PrintJob.preset("B/8");
        assertThat(b8.name()).isEqualTo("B/8");
        assertThat(b8.useCase()).isEqualTo(PrintJob.B.useCase());
        assertThat(b8.sheetWidthInches()).isEqualTo(40);
        assertThat(b8.dpi()).isEqualTo(112);
        assertThat(b8.widthPx()).isEqualTo(4_480);
        assertThat(PrintJob.preset("A/3")).isEqualTo(PrintJob.A.scaled(3));
        assertThat(PrintJob.preset("A/3").channelBytes()).isEqualTo(1_000_000);
        assertThat(PrintJob.preset("A/1")).isSameAs(PrintJob.A);
    }

    @Test
    void unknownPresetsAreRefusedByName() {
        for (String bad : new String[] {"D", "a", "B/", "B/x", "B8", " A", "", "B/8/2"}) {
            assertThatThrownBy(() -> PrintJob.preset(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("unknown print job '" + bad + "'")
                    .hasMessageContaining("B/8");
        }
        assertThatThrownBy(() -> PrintJob.preset(null))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void divisorsOutOfRangeAreRefused() {
        assertThatThrownBy(() -> PrintJob.preset("B/0"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("between 1 and 900, got 0");
        assertThatThrownBy(() -> PrintJob.preset("A/301"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("got 301");
    }

    @Test
    void sheetsWithoutDotsAreRefused() {
        assertThatThrownBy(() -> new PrintJob("tiny", "stamp", 0.001, 1, 300))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("width");
        assertThatThrownBy(() -> new PrintJob("none", "nothing", 1, 1, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("dpi");
    }

    private static String megabits(PrintJob job) {
        return String.format(Locale.ROOT, "%.1f Mbit", job.channelBytes() * 8 / 1e6);
    }

    private static String gigabits(PrintJob job) {
        return String.format(Locale.ROOT, "%.1f Gbit", job.channelBytes() * 8 / 1e9);
    }
}
