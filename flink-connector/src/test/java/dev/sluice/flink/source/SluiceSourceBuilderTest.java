package dev.sluice.flink.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.connector.base.source.reader.SourceReaderOptions;
import org.apache.kafka.common.TopicPartition;
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

    @Test
    void readsExactlyOneOfTopicsATopicPatternOrAPartitionSet() {
        SluiceSourceBuilder<String> none =
                SluiceSource.<String>builder()
                        .setBootstrapServers("b:1")
                        .setValueOnlyDeserializer(new SimpleStringSchema());
        assertThatThrownBy(none::build)
                .hasMessage("nothing to read: call setTopics, setTopicPattern or setPartitions");
        assertThatThrownBy(() -> valid().setTopicPattern(Pattern.compile("o.*")).build())
                .hasMessageStartingWith("setTopics and setTopicPattern were called")
                .hasMessageContaining("call only one of them");
        assertThatThrownBy(
                        () ->
                                none.setTopicPattern(Pattern.compile("o.*"))
                                        .setPartitions(Set.of(new TopicPartition("orders", 0)))
                                        .build())
                .hasMessageStartingWith("setTopicPattern and setPartitions were called");
        assertThatThrownBy(() -> withPartitions(Set.of()).build())
                .hasMessage("setPartitions with no partition: name one or more");
        assertThatThrownBy(() -> withPartitions(Set.of(new TopicPartition("orders", -1))).build())
                .hasMessageContaining("orders--1 is no partition");
        assertThat(withPartitions(Set.of(new TopicPartition("orders", 1))).build().readMode())
                .isEqualTo(ReadMode.AUTO);
        assertThat(
                        SluiceSource.<String>builder()
                                .setBootstrapServers("b:1")
                                .setTopicPattern(Pattern.compile("orders-.*"))
                                .setValueOnlyDeserializer(new SimpleStringSchema())
                                .build()
                                .getBoundedness())
                .isEqualTo(Boundedness.CONTINUOUS_UNBOUNDED);
    }

    private static SluiceSourceBuilder<String> withPartitions(Set<TopicPartition> partitions) {
        return SluiceSource.<String>builder()
                .setBootstrapServers("b:1")
                .setPartitions(partitions)
                .setValueOnlyDeserializer(new SimpleStringSchema());
    }

    @Test
    void setUnboundedStopsPartitionsButLeavesTheSourceUnbounded() {
        assertThat(valid().setUnbounded(SluiceOffsets.latest()).build().getBoundedness())
                .isEqualTo(Boundedness.CONTINUOUS_UNBOUNDED);
        assertThat(
                        valid().setUnbounded(SluiceOffsets.latest())
                                .setBounded(SluiceOffsets.latest())
                                .build()
                                .getBoundedness())
                .as("the last call wins, as with KafkaSource")
                .isEqualTo(Boundedness.BOUNDED);
        assertThat(
                        valid().setBounded(SluiceOffsets.latest())
                                .setUnbounded(SluiceOffsets.timestamp(5))
                                .build()
                                .getBoundedness())
                .isEqualTo(Boundedness.CONTINUOUS_UNBOUNDED);
    }

    @Test
    void refusesOffsetsThatNeedAGroupOrNamePartitionsTheSourceDoesNotRead() {
        assertThatThrownBy(
                        () -> valid().setStartingOffsets(SluiceOffsets.committedOffsets()).build())
                .hasMessage("starting from committed offsets needs a group id: call setGroupId");
        assertThatThrownBy(() -> valid().setUnbounded(SluiceOffsets.committedOffsets()).build())
                .hasMessage("stopping at committed offsets needs a group id: call setGroupId");
        assertThatThrownBy(() -> valid().setBounded(SluiceOffsets.committedOrLatest()).build())
                .hasMessage("stopping at committed offsets needs a group id: call setGroupId");
        assertThat(
                        valid().setGroupId("g")
                                .setStartingOffsets(SluiceOffsets.committedOffsets())
                                .setBounded(SluiceOffsets.committedOffsets())
                                .build()
                                .getBoundedness())
                .isEqualTo(Boundedness.BOUNDED);
        Map<TopicPartition, Long> typo = Map.of(new TopicPartition("ordrs", 0), 5L);
        assertThatThrownBy(() -> valid().setStartingOffsets(SluiceOffsets.offsets(typo)).build())
                .hasMessage(
                        "starting offsets name [ordrs-0], which the source does not read (topics"
                                + " [orders]): name only partitions it reads");
        assertThatThrownBy(() -> valid().setBounded(SluiceOffsets.of(typo)).build())
                .hasMessageStartingWith("stopping offsets name [ordrs-0]");
        assertThatThrownBy(
                        () ->
                                withPartitions(Set.of(new TopicPartition("orders", 0)))
                                        .setStartingOffsets(
                                                SluiceOffsets.offsets(
                                                        Map.of(new TopicPartition("orders", 1), 5L),
                                                        OffsetResetStrategy.NONE))
                                        .build())
                .hasMessageStartingWith("starting offsets name [orders-1]");
    }
}
