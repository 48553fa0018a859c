package dev.sluice.flink.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sluice.embedded.BrokerdProcess;
import dev.sluice.embedded.junit.BrokerdExtension;
import dev.sluice.embedded.junit.KafkaBrokerExtension;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.util.RestartStrategyUtils;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
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
 * What PUSH needs (docs/flink-source.md, "What PUSH needs"), unmet on a real daemon and broker:
 * PUSH fails the job once with a message that says what to set, although the job would restart
 * without end; AUTO reads everything through PULL. A TaskManager without the {@code java.nio}
 * add-opens is a JVM of its own ({@link ReadTopicJob}); a uid the daemon refuses is this JVM's
 * against a daemon whose {@code sluice.allowed.uids} lacks it; a segment folder this process does
 * not see is a daemon's in a mount namespace of its own.
 */
class PushRequirementsIT {
    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();
    @RegisterExtension static final BrokerdExtension BROKERD = new BrokerdExtension(KAFKA);

    @RegisterExtension
    static final MiniClusterExtension FLINK =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final int COUNT = 500;

    @TempDir static Path dir;
    private static String topic;
    private static BrokerdProcess refusing;
    private static int uid;

    @BeforeAll
    static void topicAndRefusingDaemon() throws IOException {
        topic = KAFKA.createTopic(2);
        Properties props = KAFKA.broker().clientProperties();
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < COUNT; i++) {
                producer.send(
                        new ProducerRecord<>(
                                topic,
                                i % 2,
                                null,
                                ("record-" + i).getBytes(StandardCharsets.UTF_8)));
            }
        }
        uid = (Integer) Files.getAttribute(dir, "unix:uid");
        refusing =
                BrokerdProcess.start(
                        BrokerdProcess.defaultBinary(),
                        KAFKA.bootstrapServers(),
                        dir.resolve("refusing.sock"),
                        Map.of("sluice.allowed.uids", Integer.toString(uid + 4242)));
    }

    @AfterAll
    static void stopRefusingDaemon() throws InterruptedException {
        if (refusing != null) {
            refusing.close();
        }
    }

    /** Every message of a failure's causes, one after the other. */
    static String messages(Throwable failure) {
        List<String> messages = new ArrayList<>();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            messages.add(t.toString());
        }
        return String.join(" <- ", messages);
    }

    private static SluiceSource<String> source(Path socket, ReadMode mode) {
        return SluiceSource.<String>builder()
                .setBootstrapServers(KAFKA.bootstrapServers())
                .setTopics(topic)
                .setReadMode(mode)
                .setBrokerdSocket(socket)
                .setBounded(SluiceOffsets.latest())
                .setValueOnlyDeserializer(new SimpleStringSchema())
                .build();
    }

    /**
     * Runs a PUSH job through {@code socket} under a restart strategy that would retry a
     * recoverable failure for ever; the messages of the failure that ended it.
     */
    private static String pushFailure(Path socket) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        RestartStrategyUtils.configureFixedDelayRestartStrategy(
                env, Integer.MAX_VALUE, Duration.ofMillis(100));
        env.fromSource(source(socket, ReadMode.PUSH), WatermarkStrategy.noWatermarks(), "sluice")
                .sinkTo(new DiscardingSink<>());
        JobClient job = env.executeAsync();
        try {
            List<String> failure = new ArrayList<>();
            assertThatThrownBy(
                            () ->
                                    job.getJobExecutionResult()
                                            .get(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .satisfies(e -> failure.add(messages(e)));
            return failure.get(0);
        } finally {
            job.cancel();
        }
    }

    /** Reads the topic in AUTO mode through {@code socket}, without restarts; what it read. */
    private static Set<String> readInAutoMode(Path socket) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        RestartStrategyUtils.configureNoRestartStrategy(env);
        Set<String> seen = new HashSet<>();
        try (CloseableIterator<String> records =
                env.fromSource(
                                source(socket, ReadMode.AUTO),
                                WatermarkStrategy.noWatermarks(),
                                "sluice")
                        .executeAndCollect()) {
            records.forEachRemaining(seen::add);
        }
        return seen;
    }

    @Test
    void pushWithAUidTheDaemonRefusesFailsOnceSayingWhatToSet() throws Exception {
        assertThat(pushFailure(refusing.socket()))
                .contains("The failure is not recoverable")
                .contains("SluiceSource cannot read in PUSH mode through " + refusing.socket())
                .contains("sluice-brokerd at " + refusing.socket() + " refuses uid " + uid)
                .contains("NOT_AUTHORIZED")
                .contains("grant it the topic in the daemon's sluice.allowed.topics");
    }

    @Test
    void autoWithAUidTheDaemonRefusesReadsEverythingByPulling() throws Exception {
        Set<String> seen = readInAutoMode(refusing.socket());
        assertThat(seen).hasSize(COUNT).contains("record-0", "record-" + (COUNT - 1));
    }

    /**
     * A daemon in a mount namespace of its own, with a tmpfs of its own over its {@code
     * sluice.segment.dir}: this process sees that folder empty, as a TaskManager in another
     * container (another IPC namespace) sees its own {@code /dev/shm}. Mounting needs root (or
     * CAP_SYS_ADMIN): without it the test is skipped, saying why.
     */
    private static BrokerdProcess daemonWithAFolderOfItsOwn(String name) throws Exception {
        Path folder = Files.createDirectories(dir.resolve(name + "-segments"));
        String ownMounts = "unshare --mount --propagation private -- sh -c";
        Process probe =
                new ProcessBuilder(
                                "sh",
                                "-c",
                                ownMounts + " 'mount -t tmpfs sluice-probe \"$0\"' " + folder)
                        .redirectErrorStream(true)
                        .start();
        String said = new String(probe.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assumeTrue(
                probe.waitFor() == 0,
                "a mount namespace with a tmpfs of its own for the daemon: " + said);
        Path wrapper = dir.resolve(name + "-brokerd");
        Files.writeString(
                wrapper,
                "#!/bin/sh\nexec "
                        + ownMounts
                        + " 'mount -t tmpfs sluice-private \"$0\" && exec \"$@\"' "
                        + folder
                        + " "
                        + BrokerdProcess.defaultBinary()
                        + " \"$@\"\n");
        assertThat(wrapper.toFile().setExecutable(true)).isTrue();
        return BrokerdProcess.start(
                wrapper,
                KAFKA.bootstrapServers(),
                dir.resolve(name + ".sock"),
                Map.of("sluice.segment.dir", folder.toString()));
    }

    @Test
    void pushWithASegmentFolderThisProcessDoesNotSeeFailsOnceSayingSo() throws Exception {
        try (BrokerdProcess daemon = daemonWithAFolderOfItsOwn("unseen-push")) {
            String folder = dir.resolve("unseen-push-segments").toString();
            assertThat(pushFailure(daemon.socket()))
                    .contains("The failure is not recoverable")
                    .contains("SluiceSource cannot read in PUSH mode through " + daemon.socket())
                    .contains(
                            "it needs the daemon's segment folder readable from this process:"
                                    + " cannot open the segment "
                                    + folder
                                    + "/sluice-brokerd.")
                    .contains("NoSuchFileException")
                    .contains("this reader must see that folder as the daemon does");
        }
    }

    @Test
    void autoWithASegmentFolderThisProcessDoesNotSeeReadsEverythingByPulling() throws Exception {
        try (BrokerdProcess daemon = daemonWithAFolderOfItsOwn("unseen-auto")) {
            Set<String> seen = readInAutoMode(daemon.socket());
            assertThat(seen).hasSize(COUNT).contains("record-0", "record-" + (COUNT - 1));
        }
    }

    @Test
    void pushWithoutTheAddOpensFailsOnceNamingTheSetting() throws Exception {
        Run run = readInAJvmWithoutAddOpens(ReadMode.PUSH);

        assertThat(run.code()).as(run.out()).isEqualTo(1);
        assertThat(run.out())
                .startsWith("failed: ")
                .contains("The failure is not recoverable")
                .contains("it needs direct memory access for Arrow, which this JVM denies")
                .contains("set env.java.opts.all: --add-opens=java.base/java.nio=ALL-UNNAMED");
    }

    @Test
    void autoWithoutTheAddOpensReadsEverythingByPullingAndSaysWhy() throws Exception {
        Run run = readInAJvmWithoutAddOpens(ReadMode.AUTO);

        assertThat(run.code()).as(run.out()).isZero();
        assertThat(run.out()).isEqualTo("read " + COUNT + "\n");
        assertThat(run.log())
                .contains(
                        "WARN dev.sluice.flink.source.reader.SluiceSourceReader - subtask 0: AUTO"
                                + " reads in PULL mode: PUSH through "
                                + BROKERD.socket()
                                + " needs direct memory access for Arrow")
                .contains("--add-opens=java.base/java.nio=ALL-UNNAMED");
    }

    private record Run(int code, String out, String log) {}

    /** Runs {@link ReadTopicJob} against the daemon that accepts this uid, in a plain JVM. */
    private static Run readInAJvmWithoutAddOpens(ReadMode mode) throws Exception {
        Path out = Files.createTempFile(dir, "out", ".txt");
        Path log = Files.createTempFile(dir, "log", ".txt");
        Process process =
                new ProcessBuilder(
                                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                                "-cp",
                                System.getProperty("java.class.path"),
                                ReadTopicJob.class.getName(),
                                KAFKA.bootstrapServers(),
                                topic,
                                BROKERD.socket().toString(),
                                mode.name())
                        .redirectOutput(out.toFile())
                        .redirectError(log.toFile())
                        .start();
        boolean ended;
        try {
            ended = process.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS);
        } finally {
            process.destroyForcibly();
        }
        String said = Files.readString(log);
        assertThat(ended)
                .as(
                        "the job ended within %s; the end of its log: %s",
                        WAIT, said.substring(Math.max(0, said.length() - 6000)))
                .isTrue();
        return new Run(process.exitValue(), Files.readString(out), said);
    }
}
