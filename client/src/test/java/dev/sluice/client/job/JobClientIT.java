package dev.sluice.client.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.embedded.junit.Await;
import dev.sluice.embedded.junit.KafkaBrokerExtension;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** Job submission against a real KRaft broker. */
class JobClientIT {

    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir Path dir;

    private String jobsTopic;
    private String statusTopic;
    private JobClient client;

    @BeforeEach
    void topics() {
        jobsTopic = KAFKA.createTopic(1);
        statusTopic = KAFKA.createTopic(1);
        client =
                JobClient.builder()
                        .bootstrapServers(KAFKA.bootstrapServers())
                        .jobsTopic(jobsTopic)
                        .statusTopic(statusTopic)
                        .build();
    }

    @AfterEach
    void closeClient() {
        client.close();
    }

    @Test
    void submitPutsTheCommandOnTheJobsTopicAsJson() {
        JobSpec job = JobSpecJson.parse(TestJobs.printingJobJson());

        client.submit(job);

        ConsumerRecord<byte[], byte[]> record = readRecords(jobsTopic, 1).get(0);
        assertThat(new String(record.key(), StandardCharsets.UTF_8)).isEqualTo("packaging-0001");
        assertThat(record.value()).isEqualTo(JobCommandJson.write(new JobCommand.Submit(job)));
        assertThat(JobCommandJson.parse(record.value())).isEqualTo(new JobCommand.Submit(job));
    }

    @Test
    void cancelPutsACancelCommandAfterTheSubmit() {
        client.submit(TestJobs.small("job-7"));
        client.cancel("job-7");

        List<ConsumerRecord<byte[], byte[]>> records = readRecords(jobsTopic, 2);
        assertThat(JobCommandJson.parse(records.get(1).value()))
                .isEqualTo(new JobCommand.Cancel("job-7"));
        assertThat(new String(records.get(1).key(), StandardCharsets.UTF_8)).isEqualTo("job-7");
    }

    @Test
    void sentStatusesAreWrittenInOrderByTheFlush() throws Exception {
        try (StatusPublisher publisher =
                new StatusPublisher(KAFKA.broker().clientProperties(), statusTopic)) {
            publisher.send(JobStatus.now("other", JobState.ACCEPTED));
            publisher.send(JobStatus.now("job-1", JobState.ACCEPTED));
            publisher.send(JobStatus.now("job-1", JobState.RUNNING));
            publisher.send(JobStatus.now("job-1", JobState.FAILED, "generator threw: boom"));
            publisher.flush();

            // Read while the publisher is still open: the flush, not the close, wrote them.
            JobStatus ended = client.awaitStatus("job-1", s -> s.state().isTerminal(), WAIT);

            assertThat(ended.state()).isEqualTo(JobState.FAILED);
            assertThat(ended.reason()).contains("generator threw: boom");
            assertThat(client.statuses("job-1"))
                    .extracting(JobStatus::state)
                    .containsExactly(JobState.ACCEPTED, JobState.RUNNING, JobState.FAILED);
            assertThat(client.statuses()).hasSize(4);
        }
    }

    @Test
    void aStatusThatCouldNotBeWrittenFailsTheFlushAndTheNextSend() {
        try (StatusPublisher publisher =
                new StatusPublisher(KAFKA.broker().clientProperties(), "not a topic name")) {
            publisher.send(JobStatus.now("job-4", JobState.ACCEPTED));

            assertThatThrownBy(publisher::flush)
                    .isInstanceOf(org.apache.kafka.common.KafkaException.class)
                    .hasMessageContaining("could not write a job status to not a topic name");
            assertThatThrownBy(() -> publisher.send(JobStatus.now("job-4", JobState.RUNNING)))
                    .hasMessageContaining("could not write a job status");
        }
    }

    @Test
    void awaitStatusSeesAStatusPublishedWhileItWaits() throws Exception {
        Thread publishing =
                new Thread(
                        () -> {
                            try (StatusPublisher publisher =
                                    new StatusPublisher(
                                            KAFKA.broker().clientProperties(), statusTopic)) {
                                publisher.send(JobStatus.now("job-2", JobState.ACCEPTED));
                                publisher.flush();
                            }
                        });
        publishing.start();

        JobStatus accepted = client.awaitStatus("job-2", s -> true, WAIT);
        publishing.join();

        assertThat(accepted.state()).isEqualTo(JobState.ACCEPTED);
    }

    @Test
    void awaitStatusTimesOutWhenNothingMatches() {
        assertThatThrownBy(() -> client.awaitStatus("job-3", s -> true, Duration.ofSeconds(2)))
                .isInstanceOf(TimeoutException.class)
                .hasMessageContaining("job-3");
    }

    @Test
    void aMalformedCommandIsReportedWithItsOffsetAndTheNextOneIsStillRead() {
        Properties props = KAFKA.broker().clientProperties();
        try (KafkaProducer<byte[], byte[]> raw =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            raw.send(new ProducerRecord<>(jobsTopic, bytes("job-4"), bytes("{\"type\": SUB")));
            raw.send(
                    new ProducerRecord<>(
                            jobsTopic,
                            bytes("job-5"),
                            bytes("{\"type\":\"CANCEL\",\"jobId\":\"job-6\"}")));
            raw.flush();
        }
        client.submit(TestJobs.small("job-4"));
        List<MalformedCommand> malformed = new ArrayList<>();
        List<JobCommand> commands = new ArrayList<>();

        try (JobCommandReader reader =
                new JobCommandReader(assignedFromStart(jobsTopic), malformed::add)) {
            Await.until(
                    "a valid command is read",
                    WAIT,
                    () -> {
                        commands.addAll(reader.poll(Duration.ofMillis(200)));
                        return !commands.isEmpty();
                    });
            assertThat(reader.malformedCount()).isEqualTo(2);
        }

        assertThat(commands).containsExactly(new JobCommand.Submit(TestJobs.small("job-4")));
        assertThat(malformed).extracting(MalformedCommand::offset).containsExactly(0L, 1L);
        assertThat(malformed.get(0).topic()).isEqualTo(jobsTopic);
        assertThat(malformed.get(0).reason()).startsWith("not valid JSON:");
        assertThat(malformed.get(1).reason())
                .isEqualTo("the record's key 'job-5', not the job id 'job-6'");
    }

    @Test
    void theCliSubmitsCancelsAndShowsStatuses() throws Exception {
        Path spec = dir.resolve("job.json");
        Files.writeString(spec, TestJobs.printingJobJson());

        assertThat(cli("submit", spec.toString()))
                .isEqualTo("submitted job packaging-0001 to " + jobsTopic + "\n");
        // No status yet (no scheduler here): the submission on the jobs topic makes it known.
        assertThat(cli("cancel", "packaging-0001"))
                .startsWith("asked to cancel job packaging-0001");
        publishStatus(
                new JobStatus(
                        "packaging-0001",
                        JobState.REFUSED,
                        Optional.of("no reader on printer-4"),
                        0));
        assertThat(cli("status", "packaging-0001"))
                .isEqualTo(
                        "1970-01-01T00:00:00Z  packaging-0001  REFUSED  no reader on printer-4\n");
        assertThat(cli("status")).contains("packaging-0001  REFUSED");
        assertThat(readRecords(jobsTopic, 2))
                .extracting(r -> JobCommandJson.parse(r.value()).getClass().getSimpleName())
                .containsExactly("Submit", "Cancel");
    }

    @Test
    void theCliRefusesToSubmitAJobIdThatExists() throws Exception {
        Path spec = dir.resolve("job.json");
        Files.writeString(spec, TestJobs.printingJobJson());
        publishStatus(JobStatus.now("packaging-0001", JobState.COMPLETED));

        CliRun run = runCli("submit", spec.toString());

        assertThat(run.code()).isEqualTo(1);
        assertThat(run.out()).isEmpty();
        assertThat(run.err())
                .isEqualTo(
                        "error: job packaging-0001 already exists (on "
                                + statusTopic
                                + " or "
                                + jobsTopic
                                + "); the scheduler ignores a second submission of an id: give"
                                + " the job a new id in "
                                + spec
                                + "\n");
        assertThat(endOffset(jobsTopic)).isZero();
    }

    @Test
    void theCliRefusesASecondSubmissionTheSchedulerHasNotAnsweredYet() throws Exception {
        Path spec = dir.resolve("job.json");
        Files.writeString(spec, TestJobs.printingJobJson());
        assertThat(cli("submit", spec.toString())).startsWith("submitted job packaging-0001");

        CliRun again = runCli("submit", spec.toString());

        assertThat(again.code()).isEqualTo(1);
        assertThat(again.err()).startsWith("error: job packaging-0001 already exists");
        assertThat(endOffset(jobsTopic)).isEqualTo(1);
    }

    @Test
    void theCliRefusesToCancelAnUnknownJob() {
        client.submit(TestJobs.small("job-8"));
        publishStatus(JobStatus.now("job-9", JobState.ACCEPTED));

        CliRun run = runCli("cancel", "job-10");

        assertThat(run.code()).isEqualTo(1);
        assertThat(run.out()).isEmpty();
        assertThat(run.err())
                .isEqualTo(
                        "error: no job job-10 on "
                                + statusTopic
                                + " or "
                                + jobsTopic
                                + ", nothing to cancel\n");
        assertThat(endOffset(jobsTopic)).isEqualTo(1);
    }

    private void publishStatus(JobStatus status) {
        try (StatusPublisher publisher =
                new StatusPublisher(KAFKA.broker().clientProperties(), statusTopic)) {
            publisher.send(status);
            publisher.flush();
        }
    }

    @Test
    void theCliChecksTheTopicsNamesTheMissingOnesAndCreatesThem() {
        String id = UUID.randomUUID().toString().substring(0, 8);
        String location = "printer-" + id;
        String chunkTopic = ChunkTopics.forOutputLocation(location);
        // Options given again win: topics this test has not created.
        String[] topics = {
            "--jobs-topic", "jobs-" + id,
            "--status-topic", "status-" + id,
            "--progress-topic", "progress-" + id,
            "--output-location", location
        };

        CliRun status = runCli(concat(topics, "status"));
        assertThat(status.code()).isEqualTo(1);
        assertThat(status.err())
                .startsWith("error: no topic jobs-" + id + ", status-" + id + " on the cluster")
                .contains("topics create");

        CliRun check = runCli(concat(topics, "topics", "check"));
        assertThat(check.code()).isEqualTo(1);
        assertThat(check.out())
                .containsPattern("jobs-" + id + " +MISSING, 1 partitions")
                .containsPattern(chunkTopic + " +MISSING, 4 partitions");
        assertThat(check.err()).contains("4 topic(s) missing").contains("topics create");

        CliRun create = runCli(concat(topics, "--chunk-partitions", "3", "topics", "create"));
        assertThat(create.code()).as(create.err()).isZero();
        assertThat(create.out())
                .containsPattern("status-" + id + " +created, 1 partitions")
                .containsPattern(chunkTopic + " +created, 3 partitions");

        CliRun again = runCli(concat(topics, "topics", "check"));
        assertThat(again.code()).as(again.err()).isZero();
        assertThat(again.out())
                .containsPattern("progress-" + id + " +exists, 1 partitions")
                .containsPattern(chunkTopic + " +exists, 3 partitions")
                .doesNotContain("MISSING");
        assertThat(runCli(concat(topics, "status")).code()).isZero();
    }

    private static String[] concat(String[] first, String... then) {
        List<String> all = new ArrayList<>(List.of(first));
        all.addAll(List.of(then));
        return all.toArray(String[]::new);
    }

    private record CliRun(int code, String out, String err) {}

    /** Runs the CLI against this test's broker and topics; fails unless it exits 0. */
    private String cli(String... command) {
        CliRun run = runCli(command);
        assertThat(run.code()).as("exit code, stderr: %s", run.err()).isEqualTo(0);
        return run.out();
    }

    /** Runs the CLI against this test's broker and topics. */
    private CliRun runCli(String... command) {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "--bootstrap-servers",
                                KAFKA.bootstrapServers(),
                                "--jobs-topic",
                                jobsTopic,
                                "--status-topic",
                                statusTopic));
        args.addAll(List.of(command));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code =
                JobCli.run(
                        args.toArray(String[]::new),
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8));
        return new CliRun(
                code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static KafkaConsumer<byte[], byte[]> assignedFromStart(String topic) {
        KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(
                        KAFKA.broker().clientProperties(),
                        new ByteArrayDeserializer(),
                        new ByteArrayDeserializer());
        TopicPartition partition = new TopicPartition(topic, 0);
        consumer.assign(List.of(partition));
        consumer.seekToBeginning(List.of(partition));
        return consumer;
    }

    private static List<ConsumerRecord<byte[], byte[]>> readRecords(String topic, int count) {
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = assignedFromStart(topic)) {
            Await.until(
                    count + " records of " + topic + " are read",
                    WAIT,
                    () -> {
                        consumer.poll(Duration.ofMillis(200)).forEach(records::add);
                        return records.size() >= count;
                    });
        }
        return records;
    }

    /** How many records the single-partition topic holds. */
    private static long endOffset(String topic) {
        try (KafkaConsumer<byte[], byte[]> consumer = assignedFromStart(topic)) {
            TopicPartition partition = new TopicPartition(topic, 0);
            return consumer.endOffsets(List.of(partition), WAIT).get(partition);
        }
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
