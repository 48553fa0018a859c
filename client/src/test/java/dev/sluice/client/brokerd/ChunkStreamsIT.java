package dev.sluice.client.brokerd;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.protocol.StartPosition;
import dev.sluice.embedded.BrokerdProcess;
import dev.sluice.embedded.junit.Await;
import dev.sluice.embedded.junit.KafkaBrokerExtension;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * CHUNK_STREAMS through the real broker and daemon: chunks of several streams written over several
 * partitions in reverse order (many producers: docs/formats.md, "Chunk topics"), one written twice,
 * come out of {@link ChunkSubscription} once each, in {@code seq} order, ended by their
 * end-of-stream chunk — across a SIGKILL of the daemon too, resuming from the group's committed
 * offsets mid-stream.
 */
class ChunkStreamsIT {
    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

    private static final int PARTITIONS = 4;
    private static final int CHUNKS = 200;
    private static final List<String> STREAMS = List.of("cyan", "magenta", "yellow");
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir Path dir;

    private BrokerdProcess daemon;

    @AfterEach
    void stop() throws InterruptedException {
        if (daemon != null) {
            daemon.close();
        }
    }

    private static void produceChunks(String topic, int from, int to) throws Exception {
        Properties props = KAFKA.broker().clientProperties();
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int seq = to - 1; seq >= from; seq--) {
                for (String stream : STREAMS) {
                    producer.send(chunk(topic, seq % PARTITIONS, stream, seq));
                }
            }
            // At-least-once producers write some chunks twice.
            producer.send(chunk(topic, (from + 1) % PARTITIONS, "cyan", from));
            producer.flush();
        }
    }

    private static ProducerRecord<byte[], byte[]> chunk(
            String topic, int partition, String stream, int seq) {
        ProducerRecord<byte[], byte[]> record =
                new ProducerRecord<>(topic, partition, null, bytes(stream + "-" + seq));
        record.headers().add("sluice.job", bytes("job-7"));
        record.headers().add("sluice.stream", bytes(stream));
        record.headers().add("sluice.seq", bytes(Integer.toString(seq)));
        if (seq == CHUNKS - 1) {
            record.headers().add("sluice.eos", bytes("true"));
        }
        return record;
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** Reads until `count` chunks came or every stream ended; checks order as it goes. */
    private static Map<String, List<Long>> read(
            ChunkSubscription subscription, Map<String, List<Long>> seen, int count)
            throws IOException {
        Set<String> ended = new HashSet<>();
        AtomicInteger read = new AtomicInteger();
        Await.until(
                count + " chunks are read or every stream ends",
                WAIT,
                () -> {
                    try (ChunkBatch batch = subscription.poll(Duration.ofMillis(200))) {
                        for (int i = 0;
                                batch != null && i < batch.chunkCount();
                                i++, read.incrementAndGet()) {
                            assertThat(batch.job(i)).isEqualTo("job-7");
                            List<Long> seqs =
                                    seen.computeIfAbsent(batch.stream(i), s -> new ArrayList<>());
                            assertThat(batch.seq(i))
                                    .as(batch.stream(i) + " in order")
                                    .isEqualTo(seqs.size());
                            assertThat(new String(batch.payload(i), StandardCharsets.UTF_8))
                                    .isEqualTo(batch.stream(i) + "-" + batch.seq(i));
                            seqs.add(batch.seq(i));
                            if (batch.isEndOfStream(i)) {
                                ended.add(batch.stream(i));
                            }
                        }
                    }
                    return read.get() >= count || ended.size() >= STREAMS.size();
                });
        return seen;
    }

    /** The daemon commits between pump rounds: wait until the group has offsets. */
    private static void awaitCommitted(String topic, String group) throws Exception {
        try (Admin admin = Admin.create(KAFKA.broker().clientProperties())) {
            // The group's offsets announce nothing: look again and again.
            Await.until(
                    group + " has committed offsets of " + topic,
                    WAIT,
                    () ->
                            admin
                                    .listConsumerGroupOffsets(group)
                                    .partitionsToOffsetAndMetadata()
                                    .get()
                                    .keySet()
                                    .stream()
                                    .anyMatch(p -> p.topic().equals(topic)));
        }
    }

    private ChunkSubscription subscribe(String topic, String group) throws IOException {
        return BrokerdClient.builder(daemon.socket())
                .reconnectTimeout(WAIT)
                .build()
                .subscribeChunks(
                        SubscriptionRequest.builder(topic)
                                .partitions(PARTITIONS, StartPosition.EARLIEST)
                                .groupId(group)
                                .chunkStreams("job-7")
                                // Small objects and few slots: a SIGKILL leaves most chunks
                                // unpublished.
                                .slots(2, 1024)
                                .build());
    }

    @Test
    void everyStreamArrivesOnceInOrderWithItsEnd() throws Exception {
        String topic = KAFKA.createTopic(PARTITIONS);
        produceChunks(topic, 0, CHUNKS);
        daemon =
                BrokerdProcess.start(
                        BrokerdProcess.defaultBinary(),
                        KAFKA.bootstrapServers(),
                        dir.resolve("d.sock"),
                        Map.of());
        try (ChunkSubscription subscription = subscribe(topic, "")) {
            Map<String, List<Long>> seen = read(subscription, new HashMap<>(), Integer.MAX_VALUE);
            for (String stream : STREAMS) {
                assertThat(seen.get(stream)).hasSize(CHUNKS);
            }
        }
    }

    @Test
    void aSigkilledDaemonResumesFromTheGroupAndNoChunkComesTwiceOrGoesMissing() throws Exception {
        String topic = KAFKA.createTopic(PARTITIONS);
        produceChunks(topic, 0, CHUNKS);
        daemon =
                BrokerdProcess.start(
                        BrokerdProcess.defaultBinary(),
                        KAFKA.bootstrapServers(),
                        dir.resolve("d.sock"),
                        Map.of("sluice.liveness.timeout.ms", "1000"));
        try (ChunkSubscription subscription = subscribe(topic, "chunks-resume")) {
            Map<String, List<Long>> seen = read(subscription, new HashMap<>(), 150);
            subscription.commitProcessed();
            awaitCommitted(topic, "chunks-resume");
            daemon.kill();
            daemon.restart();
            read(subscription, seen, Integer.MAX_VALUE);
            for (String stream : STREAMS) {
                assertThat(seen.get(stream)).as(stream).hasSize(CHUNKS);
            }
            assertThat(subscription.resubscriptions()).isGreaterThanOrEqualTo(1);
        }
    }
}
