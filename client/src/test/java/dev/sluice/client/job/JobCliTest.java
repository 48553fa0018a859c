package dev.sluice.client.job;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.apache.kafka.common.KafkaException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The CLI up to the point where it would talk to a cluster, which {@code JobClientIT} covers. */
class JobCliTest {

    @TempDir Path dir;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final List<JobCli.Connection> connections = new ArrayList<>();

    /** Records where the CLI would connect, then fails as an unreachable broker would. */
    private final Function<JobCli.Connection, JobClient> unreachable =
            connection -> {
                connections.add(connection);
                throw new KafkaException("broker 127.0.0.1:9092 is unreachable");
            };

    private int run(String... args) {
        return JobCli.run(
                args,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                unreachable);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void helpGoesToStandardOutput() {
        assertThat(run("--help")).isEqualTo(0);
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("sluice [OPTIONS] submit FILE");
        assertThat(connections).isEmpty();
    }

    @Test
    void noCommandIsAUsageError() {
        assertThat(run()).isEqualTo(2);
        assertThat(err()).startsWith("error: a command is required").contains("usage:");
    }

    @Test
    void unknownCommandOrOptionIsAUsageError() {
        assertThat(run("resubmit", "x")).isEqualTo(2);
        assertThat(err()).contains("error: unknown command 'resubmit'");
        assertThat(run("--verbose", "yes", "status")).isEqualTo(2);
        assertThat(err()).contains("error: unknown option --verbose");
        assertThat(connections).isEmpty();
    }

    @Test
    void wrongNumberOfOperandsIsAUsageError() {
        assertThat(run("submit")).isEqualTo(2);
        assertThat(run("submit", "a.json", "b.json")).isEqualTo(2);
        assertThat(run("cancel")).isEqualTo(2);
        assertThat(run("status", "a", "b")).isEqualTo(2);
        assertThat(err())
                .contains("submit takes one spec file")
                .contains("cancel takes one job id");
        assertThat(connections).isEmpty();
    }

    @Test
    void badTopicsArgumentsAreUsageErrorsNamingThem() {
        assertThat(run("topics")).isEqualTo(2);
        assertThat(run("topics", "delete")).isEqualTo(2);
        assertThat(run("--chunk-partitions", "0", "topics", "check")).isEqualTo(2);
        assertThat(run("--replication-factor", "three", "topics", "create")).isEqualTo(2);
        assertThat(run("--output-location", "printer 1", "topics", "check")).isEqualTo(2);
        assertThat(err())
                .contains("topics takes create or check")
                .contains("--chunk-partitions: a number from 1 to 9999, got '0'")
                .contains("--replication-factor: a number from 1 to 9999, got 'three'")
                .contains("output location");
    }

    @Test
    void anOptionWithoutValueIsAUsageError() {
        assertThat(run("status", "--bootstrap-servers")).isEqualTo(2);
        assertThat(err()).contains("option --bootstrap-servers needs a value");
    }

    @Test
    void aBadJobIdIsAUsageError() {
        assertThat(run("cancel", "a/b")).isEqualTo(2);
        assertThat(run("status", "")).isEqualTo(2);
        assertThat(err()).contains("job id: must be 1 to 128 characters");
        assertThat(connections).isEmpty();
    }

    @Test
    void aBadSpecFileIsAUsageErrorNamingTheJsonPath() throws Exception {
        Path spec = dir.resolve("job.json");
        Files.writeString(
                spec,
                TestJobs.printingJobJson()
                        .replace(
                                "\"rateBytesPerSecond\" : 4500000", "\"rateBytesPerSecond\" : -1"));

        assertThat(run("submit", spec.toString())).isEqualTo(2);
        assertThat(err())
                .isEqualTo(
                        "error: "
                                + spec
                                + ": streams[0].rateBytesPerSecond: must be positive, got -1\n");
        assertThat(connections).isEmpty();
    }

    @Test
    void aSpecFileLargerThanARecordOfTheJobsTopicIsAUsageErrorReadNoFurther() throws Exception {
        Path huge = dir.resolve("huge.json");
        try (RandomAccessFile file = new RandomAccessFile(huge.toFile(), "rw")) {
            file.setLength(JobCli.MAX_SPEC_BYTES + 1);
        }
        for (String spec : List.of(huge.toString(), "/dev/zero")) {
            assertThat(run("submit", spec)).isEqualTo(2);
        }
        assertThat(err())
                .isEqualTo(
                        "error: "
                                + huge
                                + " is larger than 1048576 bytes, more than a job spec can be (one"
                                + " record of the jobs topic)\n"
                                + "error: /dev/zero is larger than 1048576 bytes, more than a job"
                                + " spec can be (one record of the jobs topic)\n");
        assertThat(connections).isEmpty();
    }

    @Test
    void aMissingSpecFileIsAUsageError() {
        assertThat(run("submit", dir.resolve("absent.json").toString())).isEqualTo(2);
        assertThat(err()).startsWith("error: cannot read ").contains("absent.json");
    }

    @Test
    void anUnreachableClusterIsARuntimeError() throws Exception {
        Path spec = dir.resolve("job.json");
        Files.writeString(spec, TestJobs.printingJobJson());

        assertThat(run("submit", spec.toString())).isEqualTo(1);
        assertThat(run("status")).isEqualTo(1);
        assertThat(run("cancel", "packaging-0001")).isEqualTo(1);
        assertThat(err()).isEqualTo("error: broker 127.0.0.1:9092 is unreachable\n".repeat(3));
    }

    @Test
    void optionsChooseWhereToConnect() {
        run(
                "--bootstrap-servers",
                "kafka-1:9093",
                "--jobs-topic",
                "j",
                "status",
                "--status-topic",
                "s");
        run("status", "job-1");

        assertThat(connections)
                .containsExactly(
                        new JobCli.Connection("kafka-1:9093", "j", "s"),
                        new JobCli.Connection(
                                "127.0.0.1:9092", "sluice-jobs", "sluice-job-status"));
    }

    @Test
    void aBadTopicIsAUsageError() {
        int code =
                JobCli.run(
                        new String[] {"--jobs-topic", "bad topic", "cancel", "j"},
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8));

        assertThat(code).isEqualTo(2);
        assertThat(err()).startsWith("error: jobs topic must be a Kafka topic name");
    }
}
