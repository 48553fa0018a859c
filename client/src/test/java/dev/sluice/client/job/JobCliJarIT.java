package dev.sluice.client.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.sluice.embedded.junit.Await;
import dev.sluice.embedded.junit.KafkaBrokerExtension;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The job CLI as it is installed, without Maven: {@code java -jar} on the module's {@code -cli}
 * jar, and the {@code sluice-cli} launcher from {@code PREFIX/bin} with the jar as {@code
 * PREFIX/lib/sluice-cli.jar} (docs/generation.md, "The job CLI"), against a real broker. Each runs
 * in a process of its own whose PATH holds nothing but what it needs: no Maven, no class path.
 */
class JobCliJarIT {
    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir Path dir;

    private String jobsTopic;
    private String statusTopic;

    /** A process's exit code and what it wrote. */
    record Run(int exitCode, String out, String err) {}

    @BeforeEach
    void topics() {
        jobsTopic = KAFKA.createTopic(1);
        statusTopic = KAFKA.createTopic(1);
    }

    private static Path jar() {
        Path jar = Path.of(System.getProperty("sluice.cli.jar"));
        assertThat(jar).as("the shaded jar, built in the package phase").isRegularFile();
        return jar;
    }

    private List<String> topicOptions() {
        return List.of(
                "--bootstrap-servers",
                KAFKA.bootstrapServers(),
                "--jobs-topic",
                jobsTopic,
                "--status-topic",
                statusTopic);
    }

    @Test
    void theJarRunsStatusAndSubmitWithNothingButJava() throws Exception {
        try (StatusPublisher publisher =
                new StatusPublisher(KAFKA.broker().clientProperties(), statusTopic)) {
            publisher.send(JobStatus.now("cli-1", JobState.ACCEPTED));
            publisher.send(JobStatus.now("cli-1", JobState.RUNNING));
            publisher.flush();
        }
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");

        List<String> status = new ArrayList<>(List.of(java.toString(), "-jar", jar().toString()));
        status.addAll(topicOptions());
        status.addAll(List.of("status", "cli-1"));
        Run run = run(status, Map.of("PATH", pathOf()));

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out().lines())
                .hasSize(2)
                .satisfiesExactly(
                        line -> assertThat(line).endsWith("  cli-1  ACCEPTED"),
                        line -> assertThat(line).endsWith("  cli-1  RUNNING"));
        // slf4j-simple is in the jar: without a provider SLF4J would say so on stderr.
        assertThat(run.err()).doesNotContain("SLF4J");

        Path spec = dir.resolve("job.json");
        Files.writeString(spec, TestJobs.printingJobJson());
        List<String> submit = new ArrayList<>(List.of(java.toString(), "-jar", jar().toString()));
        submit.addAll(topicOptions());
        submit.addAll(List.of("submit", spec.toString()));
        Run submitted = run(submit, Map.of("PATH", pathOf()));

        assertThat(submitted.exitCode()).as(submitted.err()).isZero();
        assertThat(submitted.out()).contains("submitted job packaging-0001 to " + jobsTopic);
        ConsumerRecord<byte[], byte[]> command = firstRecord(jobsTopic);
        assertThat(JobCommandJson.parse(command.value()))
                .isEqualTo(new JobCommand.Submit(JobSpecJson.parse(TestJobs.printingJobJson())));
    }

    @Test
    void theLauncherFindsItsJarThroughALinkAndExitsTwoOnBadArguments() throws Exception {
        // PREFIX/bin/sluice-cli and PREFIX/lib/sluice-cli.jar, run through a link elsewhere.
        Path prefix = dir.resolve("prefix");
        Files.createDirectories(prefix.resolve("bin"));
        Files.createDirectories(prefix.resolve("lib"));
        Path script = prefix.resolve("bin/sluice-cli");
        Files.copy(Path.of(System.getProperty("sluice.cli.script")), script);
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.copy(jar(), prefix.resolve("lib/sluice-cli.jar"));
        Path link = Files.createDirectories(dir.resolve("elsewhere")).resolve("sluice-cli");
        Files.createSymbolicLink(link, script);
        String javaHome = System.getProperty("java.home");

        // JAVA_HOME names the java; PATH has no java at all.
        Run bad =
                run(
                        List.of(link.toString(), "resubmit", "x"),
                        Map.of(
                                "PATH",
                                pathOf("bash", "dirname", "readlink"),
                                "JAVA_HOME",
                                javaHome));

        assertThat(bad.exitCode()).as(bad.err()).isEqualTo(2);
        assertThat(bad.err().lines()).first().isEqualTo("error: unknown command 'resubmit'");
        assertThat(bad.err()).contains("usage: sluice [OPTIONS] submit FILE");
        assertThat(bad.out()).isEmpty();

        // Without JAVA_HOME, java from the PATH.
        try (StatusPublisher publisher =
                new StatusPublisher(KAFKA.broker().clientProperties(), statusTopic)) {
            publisher.send(JobStatus.now("cli-2", JobState.REFUSED, "capacity exhausted"));
            publisher.flush();
        }
        List<String> status = new ArrayList<>(List.of(link.toString()));
        status.addAll(topicOptions());
        status.add("status");
        Run ok =
                run(
                        status,
                        Map.of(
                                "PATH",
                                pathOf("bash", "dirname", "readlink") + ":" + javaHome + "/bin"));

        assertThat(ok.exitCode()).as(ok.err()).isZero();
        assertThat(ok.out()).contains("  cli-2  REFUSED  capacity exhausted");

        Files.delete(prefix.resolve("lib/sluice-cli.jar"));
        Run noJar =
                run(
                        List.of(link.toString(), "status"),
                        Map.of(
                                "PATH",
                                pathOf("bash", "dirname", "readlink"),
                                "JAVA_HOME",
                                javaHome));
        assertThat(noJar.exitCode()).isEqualTo(1);
        assertThat(noJar.err()).contains("lib/sluice-cli.jar not found");
    }

    /**
     * A directory of links to just these commands, found on this JVM's PATH: what a process whose
     * PATH is only that can run.
     */
    private String pathOf(String... commands) throws IOException {
        Path bin = Files.createDirectories(dir.resolve("path-" + String.join("-", commands)));
        for (String command : commands) {
            Path target = null;
            for (String entry : System.getenv("PATH").split(File.pathSeparator)) {
                Path candidate = Path.of(entry, command);
                if (Files.isExecutable(candidate)) {
                    target = candidate;
                    break;
                }
            }
            assertThat(target).as(command + " on the PATH").isNotNull();
            Path link = bin.resolve(command);
            if (!Files.exists(link, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                Files.createSymbolicLink(link, target);
            }
        }
        return bin.toString();
    }

    /** Runs {@code command} with only {@code env} as its environment, bounded by {@link #WAIT}. */
    private Run run(List<String> command, Map<String, String> env) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile());
        builder.environment().clear();
        builder.environment().putAll(env);
        Path out = Files.createTempFile(dir, "out", ".txt");
        Path err = Files.createTempFile(dir, "err", ".txt");
        builder.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process process = builder.start();
        if (!process.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)) {
            process.destroyForcibly();
            fail("%s did not end in %s; stderr: %s", command, WAIT, Files.readString(err));
        }
        return new Run(
                process.exitValue(),
                Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    private static ConsumerRecord<byte[], byte[]> firstRecord(String topic) {
        Properties props = KAFKA.broker().clientProperties();
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(
                        props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            TopicPartition partition = new TopicPartition(topic, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            return Await.untilNonNull(
                    "a record is on " + topic,
                    WAIT,
                    () -> {
                        for (ConsumerRecord<byte[], byte[]> record :
                                consumer.poll(Duration.ofMillis(200))) {
                            return record;
                        }
                        return null;
                    });
        }
    }
}
