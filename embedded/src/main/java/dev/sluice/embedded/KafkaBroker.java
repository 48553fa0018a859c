package dev.sluice.embedded;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.IntStream;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A single-node KRaft Apache Kafka broker in a child JVM, listening on free loopback ports.
 *
 * <p>The child JVM keeps the broker's jars (Scala, Jackson, log4j) off the caller's classpath; its
 * classpath is resolved by Maven at build time into {@code kafka-broker.classpath}. {@link
 * #start()} returns once the broker has acknowledged a produce, so callers never race its startup.
 * Used by the integration tests (through {@code KafkaBrokerExtension}) and by the demo.
 */
public final class KafkaBroker implements AutoCloseable {

    private static final String CLASSPATH_RESOURCE = "kafka-broker.classpath";
    private static final String READINESS_TOPIC = "__sluice_ready";
    private static final int NODE_ID = 1;

    private final Path workDir;
    private final boolean ownsWorkDir;
    private final Path logFile;
    private final Process process;
    private final String bootstrapServers;
    private final Thread shutdownHook;

    private KafkaBroker(Builder builder) throws IOException {
        this.ownsWorkDir = builder.workDir == null;
        this.workDir = ownsWorkDir ? Files.createTempDirectory("sluice-kafka-") : builder.workDir;
        Files.createDirectories(workDir);
        this.logFile = workDir.resolve("broker.log");

        try {
            int brokerPort = freeLoopbackPort();
            int controllerPort = freeLoopbackPort();
            this.bootstrapServers = "127.0.0.1:" + brokerPort;
            Path config = writeConfig(brokerPort, controllerPort, builder.brokerProperties);
            Path log4jConfig = writeLog4jConfig();
            String classpath = brokerClasspath();

            format(classpath, config, log4jConfig, builder.startTimeout);
            this.process =
                    javaCommand(classpath, log4jConfig, "kafka.Kafka", config.toString())
                            .redirectErrorStream(true)
                            .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                            .start();
        } catch (IOException | RuntimeException e) {
            if (ownsWorkDir) {
                deleteRecursively(workDir);
            }
            throw e;
        }
        // A broker must not outlive the JVM that started it, even when close() is never called.
        this.shutdownHook = new Thread(this::stopProcess, "sluice-kafka-broker-shutdown");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /** Starts a broker with default settings in a temporary directory. */
    public static KafkaBroker start() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** {@code host:port} of the broker's PLAINTEXT listener on 127.0.0.1. */
    public String bootstrapServers() {
        return bootstrapServers;
    }

    /** Fresh client properties pointing at this broker; callers add their own settings. */
    public Properties clientProperties() {
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        return props;
    }

    /** The broker's process, for benchmarks that account its CPU time. */
    public long pid() {
        return process.pid();
    }

    /** The broker's stdout and log4j output, for diagnosing a failure. */
    public Path logFile() {
        return logFile;
    }

    /**
     * Creates a topic with replication factor 1 and returns once the broker hosts every one of its
     * partitions. The controller acknowledges a creation, and even reports leaders, before the
     * broker has created the partitions' logs; a producer racing that window gets
     * NOT_LEADER_OR_FOLLOWER, and its idempotent retries can then fail with out-of-order sequence
     * errors.
     */
    public void createTopic(String name, int partitions) {
        withAdmin(
                "creating topic " + name,
                admin -> {
                    admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1)))
                            .all()
                            .get(30, TimeUnit.SECONDS);
                    awaitLocalLogs(admin, name, partitions);
                    return null;
                });
    }

    /** The records written to {@code topic} so far: the sum of its partitions' end offsets. */
    public long records(String topic) {
        return withAdmin(
                "reading the end offsets of " + topic,
                admin -> {
                    Map<TopicPartition, OffsetSpec> latest = new LinkedHashMap<>();
                    admin.describeTopics(List.of(topic))
                            .allTopicNames()
                            .get(30, TimeUnit.SECONDS)
                            .get(topic)
                            .partitions()
                            .forEach(
                                    p ->
                                            latest.put(
                                                    new TopicPartition(topic, p.partition()),
                                                    OffsetSpec.latest()));
                    return admin
                            .listOffsets(latest)
                            .all()
                            .get(30, TimeUnit.SECONDS)
                            .values()
                            .stream()
                            .mapToLong(ListOffsetsResultInfo::offset)
                            .sum();
                });
    }

    /** What an {@link Admin} of this broker is asked. */
    private interface AdminCall<T> {
        T call(Admin admin) throws InterruptedException, ExecutionException, TimeoutException;
    }

    private <T> T withAdmin(String what, AdminCall<T> call) {
        try (Admin admin = Admin.create(clientProperties())) {
            return call.call(admin);
        } catch (ExecutionException e) {
            throw new IllegalStateException(what + " failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while " + what, e);
        } catch (TimeoutException e) {
            throw new IllegalStateException(what + " timed out", e);
        }
    }

    private static void awaitLocalLogs(Admin admin, String topic, int partitions)
            throws InterruptedException, ExecutionException, TimeoutException {
        List<TopicPartitionReplica> replicas =
                IntStream.range(0, partitions)
                        .mapToObj(p -> new TopicPartitionReplica(topic, p, NODE_ID))
                        .toList();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!admin
                .describeReplicaLogDirs(replicas)
                .all()
                .get(10, TimeUnit.SECONDS)
                .values()
                .stream()
                .allMatch(info -> info.getCurrentReplicaLogDir() != null)) {
            if (System.nanoTime() > deadline) {
                throw new TimeoutException("the broker has no log for " + topic + " after 30 s");
            }
            Thread.sleep(20);
        }
    }

    @Override
    public void close() {
        stopProcess();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException alreadyShuttingDown) {
            // The hook is running or has run; nothing left to undo.
        }
        if (ownsWorkDir) {
            deleteRecursively(workDir);
        }
    }

    private void stopProcess() {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(15, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** Blocks until a produce is acknowledged, failing early if the broker process dies. */
    private void awaitReady(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Exception last = null;
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException(
                        "Kafka broker exited with code " + process.exitValue() + diagnostics());
            }
            try {
                createTopicIfAbsent(READINESS_TOPIC);
                produceOne();
                return;
            } catch (RuntimeException e) {
                last = e;
            }
        }
        throw new IllegalStateException(
                "Kafka broker not ready after " + timeout + ": " + last + diagnostics(), last);
    }

    private void createTopicIfAbsent(String name) {
        try {
            createTopic(name, 1);
        } catch (IllegalStateException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw e;
            }
        }
    }

    private void produceOne() {
        Properties props = clientProperties();
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 5_000);
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 5_000);
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 4_000);
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(READINESS_TOPIC, new byte[] {1}))
                    .get(10, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("readiness produce failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the broker", e);
        }
    }

    private Path writeConfig(int brokerPort, int controllerPort, Map<String, String> overrides)
            throws IOException {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("process.roles", "broker,controller");
        config.put("node.id", String.valueOf(NODE_ID));
        config.put("controller.quorum.voters", NODE_ID + "@127.0.0.1:" + controllerPort);
        config.put(
                "listeners",
                "PLAINTEXT://127.0.0.1:"
                        + brokerPort
                        + ",CONTROLLER://127.0.0.1:"
                        + controllerPort);
        config.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPort);
        config.put("controller.listener.names", "CONTROLLER");
        config.put("inter.broker.listener.name", "PLAINTEXT");
        config.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        config.put("log.dirs", workDir.resolve("data").toString());
        config.put("num.partitions", "1");
        config.put("auto.create.topics.enable", "false");
        config.put("offsets.topic.replication.factor", "1");
        config.put("transaction.state.log.replication.factor", "1");
        config.put("transaction.state.log.min.isr", "1");
        config.put("share.coordinator.state.topic.replication.factor", "1");
        config.put("share.coordinator.state.topic.min.isr", "1");
        config.put("group.initial.rebalance.delay.ms", "0");
        config.putAll(overrides);

        StringBuilder text = new StringBuilder();
        config.forEach((key, value) -> text.append(key).append('=').append(value).append('\n'));
        Path file = workDir.resolve("server.properties");
        Files.writeString(file, text);
        return file;
    }

    private Path writeLog4jConfig() throws IOException {
        Path file = workDir.resolve("log4j2.properties");
        Files.writeString(
                file,
                String.join(
                        "\n",
                        "rootLogger.level=INFO",
                        "rootLogger.appenderRef.stdout.ref=STDOUT",
                        "appender.stdout.type=Console",
                        "appender.stdout.name=STDOUT",
                        "appender.stdout.layout.type=PatternLayout",
                        "appender.stdout.layout.pattern=[%d] %p %m (%c)%n",
                        "logger.kafka.name=kafka",
                        "logger.kafka.level=WARN",
                        "logger.apache.name=org.apache.kafka",
                        "logger.apache.level=WARN",
                        ""));
        return file;
    }

    /** Runs {@code kafka.tools.StorageTool format}, which a KRaft node needs before it starts. */
    private void format(String classpath, Path config, Path log4jConfig, Duration timeout)
            throws IOException {
        String clusterId = Uuid.randomUuid().toString();
        Process format =
                javaCommand(
                                classpath,
                                log4jConfig,
                                "kafka.tools.StorageTool",
                                "format",
                                "--cluster-id",
                                clusterId,
                                "--config",
                                config.toString())
                        .redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                        .start();
        try {
            if (!format.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                format.destroyForcibly();
                throw new IllegalStateException(
                        "formatting Kafka storage timed out" + diagnostics());
            }
        } catch (InterruptedException e) {
            format.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while formatting Kafka storage", e);
        }
        if (format.exitValue() != 0) {
            throw new IllegalStateException(
                    "formatting Kafka storage failed with code "
                            + format.exitValue()
                            + diagnostics());
        }
    }

    private ProcessBuilder javaCommand(
            String classpath, Path log4jConfig, String mainClass, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xms256m");
        command.add("-Xmx1g");
        // Kafka's own start script runs G1 with these. The larger regions are ours: the broker
        // reads each request into one heap buffer, and with the default 1 MiB regions a produce
        // request of half a MiB or more (a few chunk records) is a humongous allocation, each of
        // which started a collection (160 in a minute of the generation benchmark; 7 with 16 MiB).
        command.addAll(
                List.of(
                        "-XX:+UseG1GC",
                        "-XX:MaxGCPauseMillis=20",
                        "-XX:InitiatingHeapOccupancyPercent=35",
                        "-XX:+ExplicitGCInvokesConcurrent",
                        "-XX:G1HeapRegionSize=16m"));
        command.add("-Dlog4j2.configurationFile=" + log4jConfig);
        command.add("-cp");
        command.add(classpath);
        command.add(mainClass);
        command.addAll(List.of(args));
        return new ProcessBuilder(command).directory(workDir.toFile());
    }

    private static String brokerClasspath() throws IOException {
        try (InputStream in = KafkaBroker.class.getResourceAsStream(CLASSPATH_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(
                        CLASSPATH_RESOURCE
                                + " is missing from sluice-embedded; build it with Maven, which"
                                + " resolves the broker's classpath");
            }
            String classpath = new String(in.readAllBytes(), StandardCharsets.UTF_8).strip();
            for (String entry : classpath.split(java.io.File.pathSeparator)) {
                if (!Files.exists(Path.of(entry))) {
                    throw new IllegalStateException(
                            "Kafka broker jar " + entry + " is missing; rebuild sluice-embedded");
                }
            }
            return classpath;
        }
    }

    private static int freeLoopbackPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private String diagnostics() {
        try {
            List<String> lines = Files.readAllLines(logFile);
            int from = Math.max(0, lines.size() - 40);
            return "; last lines of "
                    + logFile
                    + ":\n"
                    + String.join("\n", lines.subList(from, lines.size()));
        } catch (IOException e) {
            return "; " + logFile + " unreadable: " + e;
        }
    }

    private static void deleteRecursively(Path dir) {
        try {
            Directories.deleteRecursively(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + dir, e);
        }
    }

    /** Runs a broker until interrupted (Ctrl-C), printing its bootstrap servers. */
    public static void main(String[] args) throws InterruptedException {
        try (KafkaBroker broker = start()) {
            System.out.println("bootstrap.servers=" + broker.bootstrapServers());
            System.out.println("log=" + broker.logFile());
            Thread.currentThread().join();
        }
    }

    /** Settings of a broker to start. */
    public static final class Builder {
        private final Map<String, String> brokerProperties = new LinkedHashMap<>();
        private Path workDir;
        private Duration startTimeout = Duration.ofSeconds(60);

        private Builder() {}

        /** Overrides one {@code server.properties} setting. */
        public Builder brokerProperty(String key, String value) {
            brokerProperties.put(key, value);
            return this;
        }

        /** Keeps the broker's data and log in {@code dir}, which is then not deleted on close. */
        public Builder workDir(Path dir) {
            this.workDir = dir;
            return this;
        }

        public Builder startTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("startTimeout must be positive: " + timeout);
            }
            this.startTimeout = timeout;
            return this;
        }

        /** Starts the broker and returns once it has acknowledged a produce. */
        public KafkaBroker build() {
            KafkaBroker broker;
            try {
                broker = new KafkaBroker(this);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start the Kafka broker", e);
            }
            try {
                broker.awaitReady(startTimeout);
                return broker;
            } catch (RuntimeException e) {
                broker.close();
                throw e;
            }
        }
    }
}
