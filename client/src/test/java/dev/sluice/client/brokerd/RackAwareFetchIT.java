package dev.sluice.client.brokerd;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.protocol.StartPosition;
import dev.sluice.embedded.BrokerdProcess;
import dev.sluice.embedded.KafkaCluster;
import dev.sluice.embedded.junit.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * The daemon's rack awareness (KIP-392, docs/brokerd.md "Rack awareness") on a real three-broker
 * cluster, each broker in a rack of its own: a daemon whose {@code client.rack} is a follower's
 * rack reads that follower, and the leader again once the follower is killed; a daemon without a
 * rack reads the leader. Every record arrives once and in order throughout.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RackAwareFetchIT {
    private static final int PARTITIONS = 2;
    private static final int LEADER = 1;
    private static final int FOLLOWER = 2;
    private static final Duration WAIT = Duration.ofSeconds(60);

    private static KafkaCluster cluster;

    @TempDir Path dir;
    private BrokerdProcess daemon;

    @BeforeAll
    static void startCluster() {
        cluster = KafkaCluster.builder().brokers(3).startTimeout(Duration.ofMinutes(3)).build();
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @AfterEach
    void stopDaemon() throws InterruptedException {
        if (daemon != null) {
            daemon.close();
        }
    }

    @Test
    @Order(1)
    void aDaemonWithoutARackReadsFromTheLeader() throws Exception {
        String topic = replicatedTopic("no-rack");
        produce(topic, 0, 1000);
        daemon = daemon(Map.of());
        try (RecordsSubscription subscription = subscribe(topic)) {
            Reader reader = new Reader(subscription);
            reader.readUntil(1000);
            assertThat(reader.values).isEqualTo(expected(0, 1000));
        }
        Map<String, Long> replicas = replicas(topic);
        assertThat(replicas).isEqualTo(Map.of("0", (long) LEADER, "1", (long) LEADER));
        assertThat(recordsByBroker())
                .containsEntry(cluster.address(LEADER), 1000L)
                .doesNotContainKey(cluster.address(FOLLOWER));
    }

    @Test
    @Order(2)
    void aDaemonInAFollowersRackReadsThatFollowerAndTheLeaderOnceTheFollowerIsKilled()
            throws Exception {
        String topic = replicatedTopic("follower-rack");
        produce(topic, 0, 1000);
        daemon = daemon(Map.of("client.rack", cluster.rack(FOLLOWER)));
        try (RecordsSubscription subscription = subscribe(topic)) {
            Reader reader = new Reader(subscription);
            reader.readUntil(1000);
            assertThat(replicas(topic))
                    .as("the broker each partition is read from")
                    .isEqualTo(Map.of("0", (long) FOLLOWER, "1", (long) FOLLOWER));
            assertThat(recordsByBroker())
                    .as("records received, by broker")
                    .containsEntry(cluster.address(FOLLOWER), 1000L)
                    .containsEntry(cluster.address(LEADER), 0L);
            assertThat(Files.readString(daemon.logFile()))
                    .contains("event=fetch_replica topic=" + topic + " partition=0 broker=2");

            cluster.kill(FOLLOWER);
            produce(topic, 1000, 2000);
            reader.readUntil(2000);

            assertThat(reader.values).isEqualTo(expected(0, 2000));
            assertThat(replicas(topic)).isEqualTo(Map.of("0", (long) LEADER, "1", (long) LEADER));
            assertThat(recordsByBroker())
                    .containsEntry(cluster.address(FOLLOWER), 1000L)
                    .containsEntry(cluster.address(LEADER), 1000L);
            assertThat(Files.readString(daemon.logFile())).contains("event=fetch_replica_failed");
        }
    }

    /** A topic of {@link #PARTITIONS} partitions on all three brokers, each led by broker 1. */
    private static String replicatedTopic(String name) {
        cluster.createTopic(name, PARTITIONS, List.of(LEADER, FOLLOWER, 3));
        for (int p = 0; p < PARTITIONS; p++) {
            assertThat(cluster.leader(name, p)).isEqualTo(LEADER);
        }
        return name;
    }

    private BrokerdProcess daemon(Map<String, String> settings) throws IOException {
        return BrokerdProcess.start(
                BrokerdProcess.defaultBinary(),
                cluster.bootstrapServers(),
                dir.resolve("brokerd.sock"),
                settings);
    }

    private RecordsSubscription subscribe(String topic) throws IOException {
        return BrokerdClient.builder(daemon.socket())
                .reconnectTimeout(WAIT)
                .build()
                .subscribe(
                        SubscriptionRequest.builder(topic)
                                .partitions(PARTITIONS, StartPosition.EARLIEST)
                                .slots(8, 64 * 1024)
                                .build());
    }

    /** Record i goes to partition i % PARTITIONS with the value "value-i". */
    private static void produce(String topic, int from, int to) {
        Properties props = cluster.clientProperties();
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = from; i < to; i++) {
                producer.send(
                        new ProducerRecord<>(
                                topic,
                                i % PARTITIONS,
                                null,
                                ("value-" + i).getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
        }
    }

    private static List<String> expected(int from, int to) {
        List<String> values = new ArrayList<>();
        for (int i = from; i < to; i++) {
            values.add("value-" + i);
        }
        return values;
    }

    /** Reads a subscription, checking that each partition's offsets only go up by one. */
    private static final class Reader {
        private final RecordsSubscription subscription;
        private final Map<Integer, Long> next = new HashMap<>();
        final List<String> values = new ArrayList<>();

        Reader(RecordsSubscription subscription) {
            this.subscription = subscription;
        }

        void readUntil(int count) throws IOException {
            Await.until(
                    () -> count + " records are read, " + values.size() + " so far",
                    WAIT,
                    () -> {
                        try (RecordBatch batch = subscription.poll(Duration.ofMillis(200))) {
                            for (int row = 0; batch != null && row < batch.rowCount(); row++) {
                                int partition = batch.partition(row);
                                assertThat(batch.offset(row))
                                        .as("partition %d in order, nothing twice", partition)
                                        .isEqualTo(next.getOrDefault(partition, 0L));
                                next.put(partition, batch.offset(row) + 1);
                                values.add(new String(batch.value(row), StandardCharsets.UTF_8));
                            }
                        }
                        return values.size() >= count;
                    });
            // Records of both partitions interleave in the subscription; their order is per
            // partition, and the values tell both apart.
            values.sort(
                    (a, b) ->
                            Integer.compare(
                                    Integer.parseInt(a.substring("value-".length())),
                                    Integer.parseInt(b.substring("value-".length()))));
        }
    }

    private static final Pattern REPLICA =
            Pattern.compile(
                    "^sluice_fetch_replica\\{topic=\"([^\"]+)\",partition=\"(\\d+)\"\\} (-?\\d+)$",
                    Pattern.MULTILINE);
    private static final Pattern RECORDS_BY_BROKER =
            Pattern.compile(
                    "^sluice_fetch_records_total\\{broker=\"([^\"]+)\"\\} (\\d+)$",
                    Pattern.MULTILINE);

    /** Partition → the broker the daemon reads it from, per its metrics. */
    private Map<String, Long> replicas(String topic) throws Exception {
        Map<String, Long> found = new HashMap<>();
        Matcher m = REPLICA.matcher(metrics());
        while (m.find()) {
            if (m.group(1).equals(topic)) {
                found.put(m.group(2), Long.parseLong(m.group(3)));
            }
        }
        return found;
    }

    /** Broker address → records the daemon received from it, per its metrics. */
    private Map<String, Long> recordsByBroker() throws Exception {
        Map<String, Long> found = new HashMap<>();
        Matcher m = RECORDS_BY_BROKER.matcher(metrics());
        while (m.find()) {
            found.put(m.group(1), Long.parseLong(m.group(2)));
        }
        return found;
    }

    private String metrics() throws Exception {
        HttpRequest request =
                HttpRequest.newBuilder(URI.create("http://" + daemon.metricsAddress() + "/metrics"))
                        .build();
        return HttpClient.newHttpClient()
                .send(request, HttpResponse.BodyHandlers.ofString())
                .body();
    }
}
