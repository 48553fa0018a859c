package dev.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ResultTableTest {
    private static ResultTable runs() {
        return new ResultTable()
                .column("system")
                .column("size", "%d")
                .column("records_per_s", "%.0f")
                .column("ratio")
                .row("push", 100, 5_601_234.6, "1.27")
                .row("kafka-source", 100, 4_400_000.0, "");
    }

    @Test
    void theCsvIsTheHeaderThenARowPerRunInEachColumnsFormat(@TempDir Path dir) throws Exception {
        runs().writeCsv(dir.resolve("runs.csv"));
        assertThat(Files.readString(dir.resolve("runs.csv")))
                .isEqualTo(
                        "system,size,records_per_s,ratio\n"
                                + "push,100,5601235,1.27\n"
                                + "kafka-source,100,4400000,\n");
    }

    @Test
    void theMarkdownTableKeepsAnEmptyCellBetweenItsPipes() {
        assertThat(runs().markdown())
                .isEqualTo(
                        "| system | size | records_per_s | ratio |\n"
                                + "|---|---|---|---|\n"
                                + "| push | 100 | 5601235 | 1.27 |\n"
                                + "| kafka-source | 100 | 4400000 |  |\n");
    }

    @Test
    void numbersTakeAPointWhateverTheDefaultLocale() {
        Locale before = Locale.getDefault();
        Locale.setDefault(Locale.GERMANY);
        try {
            assertThat(new ResultTable().column("seconds", "%.2f").row(1.5).csv())
                    .isEqualTo("seconds\n1.50\n");
        } finally {
            Locale.setDefault(before);
        }
    }

    @Test
    void aRowOfTheWrongWidthNamesBothCounts() {
        assertThatThrownBy(() -> new ResultTable().column("a").column("b").row("only one"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("a row of 1 values for 2 columns");
    }

    @Test
    void aColumnAfterTheFirstRowIsAnError() {
        ResultTable table = new ResultTable().column("a").row("x");
        assertThatThrownBy(() -> table.column("b"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("column b after the first row");
    }
}
