package dev.sluice.flink.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.write.LocalChunkChannel;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class SluiceSinkBuilderTest {
    private static final long MIB = 1 << 20;

    private static SluiceSinkBuilder builder() {
        return SluiceSink.builder().setBootstrapServers("localhost:9092");
    }

    private static SinkSettings settings(SluiceSinkBuilder builder) throws Exception {
        // Through Java serialization, as Flink ships the sink to its TaskManagers.
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(builder.build());
        }
        try (ObjectInputStream in =
                new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            SluiceSink sink = (SluiceSink) in.readObject();
            var field = SluiceSink.class.getDeclaredField("settings");
            field.setAccessible(true);
            return (SinkSettings) field.get(sink);
        }
    }

    @Test
    void theDefaultCapIsFourMaxTasksPerProducerUpTo256MiB() throws Exception {
        SinkSettings s = settings(builder());
        // 64 MiB tasks × 1 producer × 4 = 256 MiB; × 2 producers = 512 MiB, capped at 256 MiB.
        assertThat(s.capPerStream(1)).isEqualTo(256 * MIB);
        assertThat(s.capPerStream(2)).isEqualTo(256 * MIB);
        assertThat(s.sharePerStream(2)).isEqualTo(128 * MIB);

        SinkSettings small = settings(builder().setMaxTaskSizeBytes(MIB));
        assertThat(small.capPerStream(3)).isEqualTo(12 * MIB);
        assertThat(small.sharePerStream(3)).isEqualTo(4 * MIB);

        SinkSettings raised =
                settings(
                        builder()
                                .setMaxTaskSizeBytes(1L << 30)
                                .setMaxInFlightBytesPerStream(Long.MAX_VALUE));
        assertThat(raised.capPerStream(1000)).isEqualTo(4000L << 30);
        assertThat(raised.capPerStream(Integer.MAX_VALUE))
                .isEqualTo((4L << 30) * Integer.MAX_VALUE);
    }

    @Test
    void aFixedCapReplacesTheFormulaAndIsSharedByTheWriters() throws Exception {
        SinkSettings s = settings(builder().setInFlightBytesPerStream(64 * 1024));
        assertThat(s.capPerStream(1)).isEqualTo(64 * 1024);
        assertThat(s.capPerStream(8)).isEqualTo(64 * 1024);
        assertThat(s.sharePerStream(2)).isEqualTo(32 * 1024);
        // Never less than a byte: a writer can always send one chunk alone.
        assertThat(settings(builder().setInFlightBytesPerStream(1)).sharePerStream(4)).isEqualTo(1);
    }

    @Test
    void producerPropertiesPassThroughAndTheConsumerGetsTheConnectionOnes() throws Exception {
        SinkSettings s =
                settings(
                        builder()
                                .setProperty("linger.ms", "20")
                                .setProperty("security.protocol", "SASL_SSL")
                                .setProperty("sasl.mechanism", "PLAIN")
                                .setProperty("ssl.truststore.type", "PEM")
                                .setProgressConsumerProperty("fetch.max.wait.ms", "50")
                                .setProgressTopic("my.progress")
                                .setPartitioning(ChunkPartitioning.ONE_PER_STREAM));
        assertThat(s.producer())
                .containsEntry("linger.ms", "20")
                .containsEntry("acks", "all")
                .containsEntry("security.protocol", "SASL_SSL")
                .containsEntry("bootstrap.servers", "localhost:9092");
        assertThat(s.consumer())
                .containsEntry("bootstrap.servers", "localhost:9092")
                .containsEntry("security.protocol", "SASL_SSL")
                .containsEntry("sasl.mechanism", "PLAIN")
                .containsEntry("ssl.truststore.type", "PEM")
                .containsEntry("fetch.max.wait.ms", "50")
                .doesNotContainKeys("linger.ms", "acks");
        assertThat(s.progressTopic()).isEqualTo("my.progress");
        assertThat(s.partitioning()).isEqualTo(ChunkPartitioning.ONE_PER_STREAM);
        assertThat(settings(builder().setProperty("acks", "1")).producer())
                .containsEntry("acks", "1");
        assertThat(settings(builder()).progressTopic()).isEqualTo("sluice-progress");
        assertThat(settings(builder()).partitioning()).isEqualTo(ChunkPartitioning.SPREAD);
    }

    @Test
    void theDaemonSocketAndTheLocalChannelSettingsReachTheWriters() throws Exception {
        assertThat(settings(builder()).local()).as("no socket: LOCAL chunks go to Kafka").isNull();

        LocalTransportSettings defaults =
                settings(builder().setBrokerdSocket(Path.of("/run/sluice/brokerd.sock"))).local();
        assertThat(defaults.socket()).isEqualTo(Path.of("/run/sluice/brokerd.sock"));
        assertThat(defaults.channel()).isEqualTo(LocalChunkChannel.Settings.defaults());

        LocalChunkChannel.Settings mine =
                new LocalChunkChannel.Settings(Path.of("/tmp/segments"), 3, Duration.ofSeconds(5));
        assertThat(
                        settings(
                                        builder()
                                                .setBrokerdSocket(Path.of("/tmp/b.sock"))
                                                .setLocalChannel(mine))
                                .local()
                                .channel())
                .isEqualTo(mine);
    }

    @Test
    void wrongSettingsAreRefusedNamingThem() {
        assertRefused(
                builder().setBrokerdSocket(Path.of("brokerd.sock")),
                "brokerd socket 'brokerd.sock': not absolute");
        assertRefused(
                builder().setLocalChannel(LocalChunkChannel.Settings.defaults()),
                "call setBrokerdSocket");
        assertThatThrownBy(() -> SluiceSink.builder().build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("bootstrap servers");
        assertRefused(builder().setProperty("value.serializer", "x"), "value.serializer");
        assertRefused(builder().setProperty("key.serializer", "x"), "key.serializer");
        assertRefused(builder().setProperty("transactional.id", "t"), "transactional.id");
        assertRefused(builder().setProperty("acks", "0"), "acks = 0");
        assertRefused(builder().setProperty("max.request.size", "lots"), "max.request.size");
        assertRefused(builder().setProperty("compression.type", "zip"), "compression.type");
        assertRefused(builder().setProgressTopic("no topic"), "progress topic 'no topic'");
        assertRefused(builder().setProgressTopic(""), "progress topic ''");
        // Kafka's own rule: "." and ".." are no topic names although their characters are allowed.
        assertRefused(builder().setProgressTopic(".."), "progress topic '..'");
        assertRefused(builder().setJobsTopic("jobs?"), "jobs topic 'jobs?'");
        assertRefused(builder().setInFlightBytesPerStream(0), "in-flight bytes per stream");
        assertRefused(builder().setMaxTaskSizeBytes(0), "max task size");
        assertRefused(builder().setMaxTaskSizeBytes((1L << 30) + 1), "max task size");
        assertRefused(builder().setMaxInFlightBytesPerStream(0), "max in-flight bytes");
        assertRefused(
                builder().setProgressPartitionRefresh(Duration.ZERO), "progress partition refresh");
        assertRefused(builder().setProgressConsumerProperty("group.id", "g"), "group.id");
    }

    private static void assertRefused(SluiceSinkBuilder builder, String naming) {
        assertThatThrownBy(builder::build)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(naming);
    }
}
