package dev.sluice.flink.source;

import dev.sluice.flink.source.enumerator.AdminClusterMetadata;
import dev.sluice.flink.source.enumerator.SluiceEnumerator;
import dev.sluice.flink.source.enumerator.SluiceEnumeratorState;
import dev.sluice.flink.source.enumerator.SluiceEnumeratorStateSerializer;
import dev.sluice.flink.source.enumerator.TopicSubscriber;
import dev.sluice.flink.source.reader.ReaderSettings;
import dev.sluice.flink.source.reader.SluiceSourceReader;
import dev.sluice.flink.source.split.SluiceSplit;
import dev.sluice.flink.source.split.SluiceSplitSerializer;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.util.UserCodeClassLoader;

/**
 * Reads Kafka topics into Flink, through the {@code sluice-brokerd} on each TaskManager's host
 * (PUSH), with a KafkaConsumer per reader (PULL), or whichever answers (AUTO). Partitions are
 * placed on readers on their leader's host; checkpoints hold the offsets, and a restore resumes
 * exactly there.
 *
 * <pre>{@code
 * SluiceSource<String> source = SluiceSource.<String>builder()
 *         .setBootstrapServers("broker:9092")
 *         .setTopics("orders")
 *         .setGroupId("order-counter")
 *         .setReadMode(ReadMode.AUTO)
 *         .setValueOnlyDeserializer(new SimpleStringSchema())
 *         .build();
 * env.fromSource(source, WatermarkStrategy.noWatermarks(), "orders");
 * }</pre>
 *
 * <p>What a {@code KafkaSource} job sets carries over under the same names: a topic pattern or a
 * partition set, starting offsets at a timestamp or from a map with a reset, stopping offsets with
 * {@code setBounded} or {@code setUnbounded}, a client id prefix, and its deserialization schema
 * through {@link SluiceDeserializationSchema#of} (docs/flink-source.md, "Coming from KafkaSource").
 */
@PublicEvolving
public final class SluiceSource<T>
        implements Source<T, SluiceSplit, SluiceEnumeratorState>, ResultTypeQueryable<T> {
    private static final long serialVersionUID = 1L;

    private final TopicSubscriber topicSubscriber;
    private final SluiceOffsets startingOffsets;
    private final SluiceOffsets stoppingOffsets;
    private final boolean bounded;
    private final long discoveryIntervalMs;
    private final ReaderSettings readerSettings;
    private final SluiceDeserializationSchema<T> deserializer;

    SluiceSource(
            TopicSubscriber topicSubscriber,
            SluiceOffsets startingOffsets,
            SluiceOffsets stoppingOffsets,
            boolean bounded,
            long discoveryIntervalMs,
            ReaderSettings readerSettings,
            SluiceDeserializationSchema<T> deserializer) {
        this.topicSubscriber = topicSubscriber;
        this.startingOffsets = startingOffsets;
        this.stoppingOffsets = stoppingOffsets;
        this.bounded = bounded;
        this.discoveryIntervalMs = discoveryIntervalMs;
        this.readerSettings = readerSettings;
        this.deserializer = deserializer;
    }

    public static <T> SluiceSourceBuilder<T> builder() {
        return new SluiceSourceBuilder<>();
    }

    @Override
    public Boundedness getBoundedness() {
        return bounded ? Boundedness.BOUNDED : Boundedness.CONTINUOUS_UNBOUNDED;
    }

    public ReadMode readMode() {
        return readerSettings.mode();
    }

    @VisibleForTesting
    ReaderSettings readerSettings() {
        return readerSettings;
    }

    @Override
    public SourceReader<T, SluiceSplit> createReader(SourceReaderContext context) throws Exception {
        deserializer.open(
                new DeserializationSchema.InitializationContext() {
                    @Override
                    public MetricGroup getMetricGroup() {
                        return context.metricGroup().addGroup("deserializer");
                    }

                    @Override
                    public UserCodeClassLoader getUserCodeClassLoader() {
                        return context.getUserCodeClassLoader();
                    }
                });
        return SluiceSourceReader.create(context, readerSettings, deserializer);
    }

    @Override
    public SplitEnumerator<SluiceSplit, SluiceEnumeratorState> createEnumerator(
            SplitEnumeratorContext<SluiceSplit> context) {
        return restoreEnumerator(context, SluiceEnumeratorState.empty());
    }

    @Override
    public SplitEnumerator<SluiceSplit, SluiceEnumeratorState> restoreEnumerator(
            SplitEnumeratorContext<SluiceSplit> context, SluiceEnumeratorState state) {
        return new SluiceEnumerator(
                context,
                topicSubscriber,
                startingOffsets,
                stoppingOffsets,
                bounded,
                discoveryIntervalMs,
                () ->
                        new AdminClusterMetadata(
                                readerSettings.kafkaProperties(
                                        readerSettings.clientIdPrefix()
                                                + "-enumerator-admin-client"),
                                readerSettings.groupId()),
                state);
    }

    @Override
    public SimpleVersionedSerializer<SluiceSplit> getSplitSerializer() {
        return new SluiceSplitSerializer();
    }

    @Override
    public SimpleVersionedSerializer<SluiceEnumeratorState> getEnumeratorCheckpointSerializer() {
        return new SluiceEnumeratorStateSerializer();
    }

    @Override
    public TypeInformation<T> getProducedType() {
        return deserializer.getProducedType();
    }
}
