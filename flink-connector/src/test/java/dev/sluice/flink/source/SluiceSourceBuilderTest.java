package dev.sluice.flink.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.connector.base.source.reader.SourceReaderOptions;
import org.junit.jupiter.api.Test;

class SluiceSourceBuilderTest {
    private static SluiceSourceBuilder<String> valid() {
        return SluiceSource.<String>builder()
                .setBootstrapServers("127.0.0.1:9092")
                .setTopics("orders")
                .setValueOnlyDeserializer(new SimpleStringSchema());
    }

    @Test
    void buildsAnUnboundedAutoSourceByDefault() {
        SluiceSource<String> source = valid().build();
        assertThat(source.getBoundedness()).isEqualTo(Boundedness.CONTINUOUS_UNBOUNDED);
        assertThat(source.readMode()).isEqualTo(ReadMode.AUTO);
        assertThat(valid().setBounded(SluiceOffsets.latest()).build().getBoundedness())
                .isEqualTo(Boundedness.BOUNDED);
    }

    @Test
    void refusesSettingsThatDoNotFitTogether() {
        assertThatThrownBy(() -> SluiceSource.<String>builder().setTopics("t").build())
                .hasMessageContaining("bootstrap servers");
        assertThatThrownBy(() -> valid().setTopics().build()).hasMessageContaining("topics");
        assertThatThrownBy(
                        () ->
                                SluiceSource.<String>builder()
                                        .setBootstrapServers("b:1")
                                        .setTopics("t")
                                        .build())
                .hasMessageContaining("deserializer");
        assertThatThrownBy(
                        () ->
                                valid().setStartingOffsets(SluiceOffsets.committedOrEarliest())
                                        .build())
                .hasMessageContaining("group id");
        assertThatThrownBy(() -> valid().setCommitOffsetsOnCheckpoint(true).build())
                .hasMessageContaining("group id");
        assertThatThrownBy(() -> valid().setSlots(4, 1 << 20, 5).build())
                .hasMessageContaining("open");
        assertThatThrownBy(() -> valid().setSlots(4, 1000, 2).build())
                .hasMessageContaining("slot size");
        assertThatThrownBy(() -> valid().setProperty("isolation.level", "committed").build())
                .hasMessage("isolation.level 'committed': read_committed or read_uncommitted");
    }

    @Test
    void namesTheClientsAfterThePrefixAsKafkaSourceDoes() {
        assertThat(valid().setClientIdPrefix("orders-job").build().readerSettings().clientId(3, ""))
                .isEqualTo("orders-job-3");
        assertThat(valid().setGroupId("g").build().readerSettings().clientId(0, "commit"))
                .isEqualTo("g-0-commit");
        assertThat(
                        valid().setProperty("client.id", "mine")
                                .build()
                                .readerSettings()
                                .clientId(1, ""))
                .isEqualTo("mine-1");
        SluiceSource<String> both =
                valid().setProperty("client.id", "mine").setClientIdPrefix("prefix").build();
        assertThat(both.readerSettings().clientId(2, "stop")).isEqualTo("prefix-2-stop");
        assertThat(both.readerSettings().kafkaProperties())
                .doesNotContainKeys("client.id", "client.id.prefix");
        assertThat(valid().build().readerSettings().clientIdPrefix()).startsWith("sluice-source-");
        assertThatThrownBy(() -> valid().setClientIdPrefix(" ").build())
                .hasMessageContaining("setClientIdPrefix");
    }

    @Test
    void passesTheSourcesPropertiesToTheReaderAsFlinkConfiguration() {
        assertThat(
                        valid().setProperty("source.reader.element.queue.capacity", "7")
                                .build()
                                .readerSettings()
                                .readerConfiguration()
                                .get(SourceReaderOptions.ELEMENT_QUEUE_CAPACITY))
                .isEqualTo(7);
    }
}
