package dev.sluice.flink.generation.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.job.JobClient;
import dev.sluice.client.job.JobCommand;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.progress.DeliveryProgress;
import dev.sluice.client.progress.DeliveryProgressCodec;
import dev.sluice.embedded.junit.KafkaBrokerExtension;
import dev.sluice.flink.generation.PatternGenerator;
import dev.sluice.flink.generation.TestJobs;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The scheduler's control plane on a real KRaft broker: both topics through one consumer. */
class KafkaControlPlaneIT {
    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

    private static final Duration WAIT = Duration.ofSeconds(60);
    // Far longer than WAIT: a poll that came back within WAIT came back because a record came.
    private static final Duration LONG_POLL = Duration.ofMinutes(10);
    private static final AtomicInteger TESTS = new AtomicInteger();

    private final String jobsTopic = "cp-jobs-" + TESTS.incrementAndGet();
    private final String statusTopic = "cp-status-" + TESTS.get();
    private final String progressTopic = "cp-progress-" + TESTS.get();
    private final ExecutorService poller = Executors.newSingleThreadExecutor();
    private final KafkaProducer<byte[], byte[]> producer =
            new KafkaProducer<>(
                    Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers()),
                    new ByteArraySerializer(),
                    new ByteArraySerializer());

    @AfterEach
    void close() {
        poller.shutdownNow();
        producer.close();
    }

    private KafkaControlPlane plane() {
        Properties properties = new Properties();
        properties.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers());
        return new KafkaControlPlane(properties, jobsTopic, statusTopic, progressTopic);
    }

    private static DeliveryProgress announcement(String job, String stream) {
        return new DeliveryProgress(job, stream, 0, 1, -1, 0, false);
    }

    private void send(DeliveryProgress progress) throws Exception {
        producer.send(
                        new ProducerRecord<>(
                                progressTopic,
                                DeliveryProgressCodec.key(progress),
                                DeliveryProgressCodec.encode(progress)))
                .get();
    }

    /** Polls with a long timeout, on the poller thread, until a poll brings something. */
    private ControlPlane.Batch next(ControlPlane plane) throws Exception {
        return poller.submit(
                        () -> {
                            ControlPlane.Batch batch;
                            do {
                                batch = plane.poll(LONG_POLL);
                            } while (batch.commands().isEmpty()
                                    && batch.malformed().isEmpty()
                                    && batch.progress().isEmpty());
                            return batch;
                        })
                .get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void aPollReturnsWithTheFirstRecordOfEitherTopicNotAtItsTimeout() throws Exception {
        JobSpec job = TestJobs.job("job-1", 1, 4096, 4096, 1024, PatternGenerator.class, Map.of());
        try (KafkaControlPlane plane = plane();
                JobClient jobs =
                        JobClient.builder()
                                .bootstrapServers(KAFKA.bootstrapServers())
                                .jobsTopic(jobsTopic)
                                .statusTopic(statusTopic)
                                .build()) {
            send(announcement("job-1", "c0"));
            assertThat(next(plane).progress()).containsExactly(announcement("job-1", "c0"));

            jobs.submit(job);
            ControlPlane.Batch submitted = next(plane);
            assertThat(submitted.commands()).containsExactly(new JobCommand.Submit(job));
            assertThat(submitted.progress()).isEmpty();
            assertThat(submitted.positions())
                    .containsEntry(jobsTopic + "-0", 1L)
                    .containsEntry(progressTopic + "-0", 1L);
        }
    }

    @Test
    void aMalformedProgressRecordIsSkippedAndTheNextOneDelivered() throws Exception {
        try (KafkaControlPlane plane = plane()) {
            producer.send(
                            new ProducerRecord<>(
                                    progressTopic,
                                    "job-1/c0".getBytes(StandardCharsets.UTF_8),
                                    "not progress".getBytes(StandardCharsets.UTF_8)))
                    .get();
            send(announcement("job-1", "c0"));

            List<DeliveryProgress> progress = new ArrayList<>();
            while (progress.isEmpty()) {
                progress.addAll(next(plane).progress());
            }
            assertThat(progress).containsExactly(announcement("job-1", "c0"));
        }
    }

    @Test
    void aRestoredPlaneResumesBothTopicsAtTheCheckpointedPositions() throws Exception {
        Map<String, Long> positions;
        try (KafkaControlPlane first = plane()) {
            send(announcement("job-1", "c0"));
            positions = next(first).positions();
        }
        send(announcement("job-1", "c1"));

        try (KafkaControlPlane restored = plane()) {
            restored.seek(positions);
            assertThat(next(restored).progress()).containsExactly(announcement("job-1", "c1"));
        }
    }
}
