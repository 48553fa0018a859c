package dev.sluice.examples.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.embedded.junit.BrokerdExtension;
import dev.sluice.embedded.junit.KafkaBrokerExtension;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.WebOptions;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fat jar as a user submits it: uploaded to a Flink cluster's REST API and run from there, its
 * classes loaded from the jar by Flink's user-code class loader. The cluster is a MiniCluster with
 * the REST endpoint of a session cluster; its class path has Flink but neither the job, the
 * connector nor Arrow Java (the failsafe configuration leaves them out), so a class missing from
 * the jar fails the job. Real Kafka broker, real {@code sluice-brokerd}, PUSH mode.
 */
class CountJobIT {
    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();
    @RegisterExtension static final BrokerdExtension BROKERD = new BrokerdExtension(KAFKA);

    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir static Path uploads;
    private static MiniCluster flink;
    private static URI rest;
    private static String jarId;

    @BeforeAll
    static void startClusterAndUploadTheJar() throws Exception {
        Configuration conf = new Configuration();
        conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
        conf.set(RestOptions.ADDRESS, "127.0.0.1");
        conf.set(RestOptions.BIND_PORT, "0");
        conf.set(WebOptions.UPLOAD_DIR, uploads.toString());
        flink =
                new MiniCluster(
                        new MiniClusterConfiguration.Builder()
                                .setConfiguration(conf)
                                .setNumTaskManagers(1)
                                .setNumSlotsPerTaskManager(2)
                                .build());
        flink.start();
        rest = flink.getRestAddress().get();
        jarId = upload(Path.of(System.getProperty("sluice.example.jar")));
    }

    @AfterAll
    static void stopCluster() throws Exception {
        if (flink != null) {
            flink.close();
        }
    }

    @Test
    void theTestClassPathHasNoneOfTheJarsClasses() {
        for (String name :
                List.of(
                        "dev.sluice.examples.job.CountJob",
                        "dev.sluice.flink.source.SluiceSource",
                        "org.apache.arrow.vector.VectorSchemaRoot")) {
            assertThatThrownBy(() -> Class.forName(name))
                    .isInstanceOf(ClassNotFoundException.class);
        }
    }

    @Test
    void countsEveryRecordOfEachPartitionInPushMode() throws Exception {
        Topic topic = produced(5_000);

        String job = runPush(topic.name());
        awaitFinished(job);

        assertCountedExactly(job, topic.counts());
        // PUSH: the records came through the daemon.
        assertThat(daemonRecordsOut(topic.name())).isGreaterThanOrEqualTo(topic.total());
    }

    @Test
    void countsExactlyThroughTheLossOfItsTaskManagerMidJob() throws Exception {
        Topic topic = produced(3_000_000);

        // One subtask, checkpointing every 10 ms.
        String job = runPush(topic.name(), "--checkpoint-interval", "10", "--parallelism", "1");
        // Struck while it reads: once the daemon has pushed a tenth of the records, which it does
        // at most its slots ahead of the job. Waiting for a completed checkpoint instead found the
        // job done on a loaded machine. The job restarts from its last checkpoint, state and
        // offsets, or from the start when none completed yet, and must count exactly either way.
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (daemonRecordsOut(topic.name()) < topic.total() / 10) {
            assertThat(get("/jobs/" + job).path("state").asText())
                    .as("job %s before it read", job)
                    .isIn("CREATED", "INITIALIZING", "RUNNING");
            assertThat(System.nanoTime()).as("job %s not reading", job).isLessThan(deadline);
            Thread.sleep(10);
        }
        flink.terminateTaskManager(0).get();
        flink.startTaskManager();
        awaitFinished(job);

        assertThat(get("/jobs/" + job + "/exceptions").path("exceptionHistory").path("entries"))
                .as("the job failed over")
                .isNotEmpty();
        assertCountedExactly(job, topic.counts());
    }

    @Test
    void aBadArgumentFailsTheRunWithAUsageLineNamingIt() throws Exception {
        HttpResponse<String> response =
                runRequest(
                        "--bootstrap-servers",
                        KAFKA.bootstrapServers(),
                        "--topic",
                        "any",
                        "--mode",
                        "FAST");
        assertThat(response.statusCode()).isGreaterThanOrEqualTo(400);
        assertThat(response.body()).contains("--mode FAST").contains("usage: CountJob");
    }

    /** A topic of three partitions and the records sent to each. */
    private record Topic(String name, Map<Integer, Long> counts) {
        long total() {
            return counts.values().stream().mapToLong(Long::longValue).sum();
        }
    }

    /** A new topic of three partitions with {@code records} records sent to it. */
    private static Topic produced(int records) {
        String name = KAFKA.createTopic(3);
        return new Topic(name, produce(name, 3, records));
    }

    /** Sends different counts to each partition, so a count in the wrong place shows. */
    private static Map<Integer, Long> produce(String topic, int partitions, int count) {
        Properties props = KAFKA.broker().clientProperties();
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        Map<Integer, Long> produced = new HashMap<>();
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < count; i++) {
                // Partition p gets a share proportional to p + 1.
                int slot = i % (partitions * (partitions + 1) / 2);
                int partition = 0;
                while (slot > partition) {
                    slot -= partition + 1;
                    partition++;
                }
                producer.send(new ProducerRecord<>(topic, partition, null, new byte[100]));
                produced.merge(partition, 1L, Long::sum);
            }
        }
        return produced;
    }

    /** POST /jars/upload, as {@code curl -F jarfile=@...} does; returns the jar's id. */
    private static String upload(Path jar) throws Exception {
        String boundary = UUID.randomUUID().toString();
        String head =
                "--"
                        + boundary
                        + "\r\nContent-Disposition: form-data; name=\"jarfile\"; filename=\""
                        + jar.getFileName()
                        + "\"\r\nContent-Type: application/x-java-archive\r\n\r\n";
        HttpRequest request =
                HttpRequest.newBuilder(rest.resolve("/jars/upload"))
                        .header("Content-Type", "multipart/form-data; boundary=" + boundary)
                        .POST(
                                HttpRequest.BodyPublishers.concat(
                                        HttpRequest.BodyPublishers.ofString(head),
                                        HttpRequest.BodyPublishers.ofFile(jar),
                                        HttpRequest.BodyPublishers.ofString(
                                                "\r\n--" + boundary + "--\r\n")))
                        .build();
        JsonNode answer = ok(HTTP.send(request, HttpResponse.BodyHandlers.ofString()));
        assertThat(answer.path("status").asText()).isEqualTo("success");
        return Path.of(answer.path("filename").asText()).getFileName().toString();
    }

    private static HttpResponse<String> runRequest(String... args)
            throws IOException, InterruptedException {
        Map<String, Object> body = new HashMap<>();
        body.put("programArgsList", List.of(args));
        return HTTP.send(
                HttpRequest.newBuilder(rest.resolve("/jars/" + jarId + "/run"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Runs the job over {@code topic} in PUSH mode, parallelism 2, with {@code more} arguments. */
    private static String runPush(String topic, String... more) throws Exception {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "--bootstrap-servers",
                                KAFKA.bootstrapServers(),
                                "--topic",
                                topic,
                                "--mode",
                                "PUSH",
                                "--brokerd-socket",
                                BROKERD.socket().toString(),
                                "--parallelism",
                                "2"));
        args.addAll(List.of(more));
        return run(args.toArray(String[]::new));
    }

    /** POST /jars/&lt;id&gt;/run; returns the job's id. */
    private static String run(String... args) throws Exception {
        return ok(runRequest(args)).path("jobid").asText();
    }

    private static void awaitFinished(String job) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            String state = get("/jobs/" + job).path("state").asText();
            if (state.equals("FINISHED")) {
                return;
            }
            if (List.of("FAILED", "CANCELED").contains(state)) {
                // The failure's chain of causes, without the stack frames.
                String trace =
                        get("/jobs/" + job + "/exceptions")
                                .path("exceptionHistory")
                                .path("entries")
                                .path(0)
                                .path("stacktrace")
                                .asText();
                throw new AssertionError(
                        "job "
                                + state
                                + ":\n"
                                + String.join(
                                        "\n",
                                        trace.lines().filter(l -> !l.startsWith("\t")).toList()));
            }
            assertThat(System.nanoTime()).as("job %s still %s", job, state).isLessThan(deadline);
            Thread.sleep(100);
        }
    }

    /** The job's accumulators: the total and each partition's count, and nothing else. */
    private static void assertCountedExactly(String job, Map<Integer, Long> produced)
            throws Exception {
        Map<String, Long> expected = new HashMap<>();
        expected.put("records", produced.values().stream().mapToLong(Long::longValue).sum());
        produced.forEach((p, n) -> expected.put("records-partition-" + p, n));
        assertThat(accumulators(job)).isEqualTo(expected);
    }

    /** GET /jobs/&lt;id&gt;/accumulators: the user accumulators, by name. */
    private static Map<String, Long> accumulators(String job) throws Exception {
        Map<String, Long> values = new HashMap<>();
        for (JsonNode a : get("/jobs/" + job + "/accumulators").path("user-task-accumulators")) {
            assertThat(a.path("type").asText()).isEqualTo("LongCounter");
            values.put(a.path("name").asText(), Long.parseLong(a.path("value").asText()));
        }
        return values;
    }

    private static JsonNode get(String path) throws Exception {
        return ok(
                HTTP.send(
                        HttpRequest.newBuilder(rest.resolve(path)).build(),
                        HttpResponse.BodyHandlers.ofString()));
    }

    private static JsonNode ok(HttpResponse<String> response) throws IOException {
        assertThat(response.statusCode())
                .as("%s: %s", response.uri(), response.body())
                .isEqualTo(200);
        return JSON.readTree(response.body());
    }

    /** The daemon's {@code sluice_records_out_total} for the topic, summed over partitions. */
    private static double daemonRecordsOut(String topic) throws Exception {
        String metrics =
                HTTP.send(
                                HttpRequest.newBuilder(
                                                URI.create(
                                                        "http://"
                                                                + BROKERD.daemon().metricsAddress()
                                                                + "/metrics"))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString())
                        .body();
        List<Double> values = new ArrayList<>();
        for (String line : metrics.split("\n")) {
            if (line.startsWith("sluice_records_out_total") && line.contains("\"" + topic + "\"")) {
                values.add(Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)));
            }
        }
        return values.stream().mapToDouble(Double::doubleValue).sum();
    }
}
