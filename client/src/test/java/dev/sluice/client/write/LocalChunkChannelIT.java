package dev.sluice.client.write;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.read.StreamChunk;
import dev.sluice.client.read.StreamReader;
import dev.sluice.embedded.BrokerdProcess;
import dev.sluice.embedded.junit.Await;
import dev.sluice.embedded.junit.KafkaBrokerExtension;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link LocalChunkChannel} against the real broker and a real {@code sluice-brokerd}: one stream
 * whose first chunks come through the channel's producer segment and the rest as chunk records
 * through Kafka reaches a {@link StreamReader} complete, in order and once (docs/generation.md,
 * "Transports"); after a SIGKILL of the daemon the channel reports the stream lost, connects to the
 * restarted daemon, and the resubscribed reader gets what it sends after (docs/generation.md,
 * "Recovery").
 */
class LocalChunkChannelIT {
    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

    private static final int PARTITIONS = 2;
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final AtomicInteger NAMES = new AtomicInteger();
    private static final String JOB = "job-l";

    @TempDir Path dir;

    private BrokerdProcess daemon;
    private BrokerdClient brokerd;
    private Path segments;

    @BeforeEach
    void start() throws IOException {
        // The producers' segments go in the daemon's own folder, the only one PRODUCE takes
        // (docs/brokerd.md, "Local producers").
        segments = Files.createDirectory(dir.resolve("segments"));
        daemon =
                BrokerdProcess.start(
                        BrokerdProcess.defaultBinary(),
                        KAFKA.bootstrapServers(),
                        dir.resolve("d.sock"),
                        // A killed daemon's segments are found dead within a second.
                        Map.of(
                                "sluice.liveness.timeout.ms",
                                "1000",
                                "sluice.segment.dir",
                                segments.toString()));
        brokerd = BrokerdClient.builder(daemon.socket()).reconnectTimeout(WAIT).build();
    }

    /** The producer segments in the folder, which holds the daemon's own segments too. */
    private List<Path> producerSegments() throws IOException {
        try (var files = Files.list(segments)) {
            return files.filter(f -> f.getFileName().toString().startsWith("sluice-produce-"))
                    .toList();
        }
    }

    @AfterEach
    void stop() throws InterruptedException {
        daemon.close();
    }

    /** A chunk topic of its own: sluice.chunks.<outputLocation>. */
    private static String chunkTopic() {
        String topic =
                "sluice.chunks.press-"
                        + NAMES.incrementAndGet()
                        + "-"
                        + ProcessHandle.current().pid();
        KAFKA.broker().createTopic(topic, PARTITIONS);
        return topic;
    }

    /** Chunk {@code seq}: its name, then bytes that follow seq; every fifth one larger. */
    private static byte[] payload(String stream, long seq) {
        // Larger than the channel's first slots: the segment is replaced mid-stream.
        int size = seq % 5 == 3 ? 100_000 + (int) seq : 1000 + (int) seq;
        byte[] bytes = new byte[size];
        byte[] name = (stream + "-" + seq + ":").getBytes(StandardCharsets.UTF_8);
        System.arraycopy(name, 0, bytes, 0, name.length);
        for (int i = name.length; i < size; i++) {
            bytes[i] = (byte) (seq * 31 + i);
        }
        return bytes;
    }

    /** Writes chunks {@code from} to {@code to - 1} as chunk records, the last seq first. */
    private static void produceToKafka(String topic, String stream, int from, int to, int end)
            throws Exception {
        Properties props = KAFKA.broker().clientProperties();
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int seq = to - 1; seq >= from; seq--) {
                producer.send(
                        ChunkRecords.record(
                                topic,
                                ChunkRecords.spreadPartition(JOB, stream, seq, PARTITIONS),
                                JOB,
                                stream,
                                seq,
                                seq == end,
                                payload(stream, seq)));
            }
            producer.flush();
        }
    }

    private static void sendLocally(
            LocalChunkChannel channel, String stream, int from, int to, int end) throws Exception {
        for (int seq = from; seq < to; seq++) {
            channel.send(JOB, stream, seq, seq == end, payload(stream, seq));
        }
    }

    private StreamReader reader(String topic, String stream) throws IOException {
        return StreamReader.builder(brokerd, JOB, stream)
                .topic(topic)
                .partitions(PARTITIONS)
                .slots(8, 256 << 10)
                .open();
    }

    /** Reads until {@code count} more chunks came or the stream ended; checks every payload. */
    private static List<Long> read(StreamReader reader, int count, List<Long> seqs)
            throws IOException {
        int before = seqs.size();
        Await.until(
                () -> reader.stream() + " ends or " + count + " more chunks come; got " + seqs,
                WAIT,
                () -> {
                    if (seqs.size() - before >= count || reader.isEndOfStream()) {
                        return true;
                    }
                    try (StreamChunk chunk = reader.acquire(Duration.ofMillis(200))) {
                        if (chunk != null) {
                            ByteBuffer view = chunk.payload();
                            byte[] bytes = new byte[view.remaining()];
                            view.get(bytes);
                            assertThat(bytes)
                                    .as("payload of %s #%d", reader.stream(), chunk.seq())
                                    .isEqualTo(payload(reader.stream(), chunk.seq()));
                            seqs.add(chunk.seq());
                        }
                    }
                    return false;
                });
        return seqs;
    }

    private static List<Long> range(long from, long to) {
        return LongStream.range(from, to).boxed().toList();
    }

    @Test
    void chunksThroughTheChannelAndThroughKafkaMakeOneStreamCompleteInOrderOnce() throws Exception {
        String topic = chunkTopic();
        int local = 12;
        int chunks = 30;
        // The later chunks are there first: the daemon holds them until the local ones came.
        produceToKafka(topic, "cyan", local, chunks, chunks - 1);
        AtomicInteger losses = new AtomicInteger();
        try (StreamReader reader = reader(topic, "cyan");
                LocalChunkChannel channel =
                        LocalChunkChannel.open(
                                brokerd,
                                topic,
                                new LocalChunkChannel.Settings(segments, 4, WAIT),
                                losses::incrementAndGet)) {
            sendLocally(channel, "cyan", 0, local, chunks - 1);
            // One local chunk again, as a producer restored from its checkpoint re-emits it.
            channel.send(JOB, "cyan", 2, false, payload("cyan", 2));

            List<Long> seqs = read(reader, Integer.MAX_VALUE, new ArrayList<>());
            assertThat(reader.acquire(Duration.ofMillis(200))).isNull();
            assertThat(seqs).isEqualTo(range(0, chunks));
            assertThat(reader.isEndOfStream()).isTrue();
            assertThat(channel.chunksSent()).isEqualTo(local + 1);
            assertThat(channel.losses()).isZero();
            assertThat(channel.takeLostStreams()).isEmpty();
        }
        assertThat(losses).hasValue(0);
        assertThat(producerSegments())
                .as("the channel's segments are gone once it closed")
                .isEmpty();
    }

    @Test
    void afterASigkilledDaemonTheStreamIsLostAndTheChannelSendsOnToTheNextOne() throws Exception {
        String topic = chunkTopic();
        int before = 10;
        int chunks = 25;
        AtomicInteger losses = new AtomicInteger();
        try (StreamReader reader = reader(topic, "magenta");
                LocalChunkChannel channel =
                        LocalChunkChannel.open(
                                brokerd,
                                topic,
                                new LocalChunkChannel.Settings(segments, 4, WAIT),
                                losses::incrementAndGet)) {
            sendLocally(channel, "magenta", 0, before, chunks - 1);
            List<Long> seqs = read(reader, before, new ArrayList<>());
            assertThat(seqs).isEqualTo(range(0, before));

            daemon.kill();
            Await.until("the channel sees the daemon gone", WAIT, () -> losses.get() == 1);
            assertThat(channel.takeLostStreams()).containsExactly(JOB + "/magenta");
            assertThat(channel.takeLostStreams()).as("told once").isEmpty();

            daemon.restart();
            // A local chunk reaches only the subscriptions the daemon holds when it comes.
            // The metrics announce nothing: look again and again.
            Await.until(
                    "the reader subscribed to the restarted daemon",
                    WAIT,
                    () -> daemon.metric("sluice_subscriptions") >= 1);
            sendLocally(channel, "magenta", before, chunks, chunks - 1);

            read(reader, Integer.MAX_VALUE, seqs);
            assertThat(seqs).isEqualTo(range(0, chunks));
            assertThat(reader.isEndOfStream()).isTrue();
            assertThat(channel.losses()).isEqualTo(1);
            assertThat(channel.chunksSent()).isEqualTo(chunks);
            assertThat(channel.takeLostStreams()).isEmpty();
        }
        assertThat(losses).hasValue(1);
    }

    @Test
    void aDaemonThatDoesNotComeBackFailsTheSendNamingTheSocketTheTopicAndTheTimeout()
            throws Exception {
        String topic = chunkTopic();
        Duration timeout = Duration.ofSeconds(2);
        AtomicInteger losses = new AtomicInteger();
        try (LocalChunkChannel channel =
                LocalChunkChannel.open(
                        brokerd,
                        topic,
                        new LocalChunkChannel.Settings(segments, 4, timeout),
                        losses::incrementAndGet)) {
            // No reader: the daemon takes the chunk and routes it nowhere.
            channel.send(JOB, "yellow", 0, false, payload("yellow", 0));
            daemon.kill();
            Await.until("the channel sees the daemon gone", WAIT, () -> losses.get() == 1);

            assertThatThrownBy(() -> channel.send(JOB, "yellow", 1, false, payload("yellow", 1)))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("sluice-brokerd at " + daemon.socket())
                    .hasMessageContaining(topic)
                    .hasMessageContaining("reconnect timeout PT2S");
            assertThat(channel.takeLostStreams()).containsExactly(JOB + "/yellow");
            assertThat(channel.chunksSent()).isEqualTo(1);
        }
        assertThat(producerSegments()).as("no segment left behind").isEmpty();
    }
}
