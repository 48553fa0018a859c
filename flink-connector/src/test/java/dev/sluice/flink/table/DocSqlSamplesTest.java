package dev.sluice.flink.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.sluice.embedded.junit.DocSamples;
import java.nio.file.Path;
import java.util.List;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.junit.jupiter.api.Test;

/**
 * The SQL samples of the project's pages hold against the connector: each runs its DDL, and Flink's
 * planner plans its queries and a read of each table it creates through the {@code 'connector' =
 * 'sluice'} table source, which checks every option (docs/architecture.md, "Tests"). Planning
 * reaches no broker.
 */
class DocSqlSamplesTest {

    @Test
    void everySqlSampleIsPlannedThroughTheConnector() {
        List<DocSamples.Sample> samples = DocSamples.of(Path.of(".."), "sql");
        assertThat(samples).as("SQL samples in the docs").hasSizeGreaterThanOrEqualTo(2);
        for (DocSamples.Sample sample : samples) {
            TableEnvironment tEnv = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
            // The samples' comments are whole-line or trailing ones, with no ';' in their strings.
            for (String statement : sample.code().replaceAll("--[^\n]*", "").split(";")) {
                if (statement.isBlank()) {
                    continue;
                }
                assertThatCode(
                                () -> {
                                    if (statement.strip().toUpperCase().startsWith("CREATE")) {
                                        tEnv.executeSql(statement);
                                    } else {
                                        tEnv.explainSql(statement);
                                    }
                                })
                        .as("%s: %s", sample.where(), statement.strip())
                        .doesNotThrowAnyException();
            }
            // A table no query of the sample reads is planned too: its options are checked then.
            for (String table : tEnv.listTables()) {
                assertThatCode(() -> tEnv.explainSql("SELECT * FROM `" + table + "`"))
                        .as("%s: table %s", sample.where(), table)
                        .doesNotThrowAnyException();
            }
        }
    }
}
