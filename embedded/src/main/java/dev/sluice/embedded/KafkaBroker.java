package dev.sluice.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;

/**
 * A single-node KRaft Apache Kafka broker in a child JVM, listening on free loopback ports.
 *
 * <p>The child JVM keeps the broker's jars (Scala, Jackson, log4j) off the caller's classpath
 * ({@link KafkaNode}). {@link #start()} returns once the broker has acknowledged a produce, so
 * callers never race its startup. Used by the integration tests (through {@code
 * KafkaBrokerExtension}) and by the demo; {@link KafkaCluster} runs several brokers.
 */
public final class KafkaBroker implements AutoCloseable {

    private static final String READINESS_TOPIC = "__sluice_ready";
    private static final int NODE_ID = 1;

    private final Path workDir;
    private final boolean ownsWorkDir;
    private final KafkaNode node;
    private final String bootstrapServers;
    private final Thread shutdownHook;

    private KafkaBroker(Builder builder) throws IOException {
        this.ownsWorkDir = builder.workDir == null;
        this.workDir = ownsWorkDir ? Files.createTempDirectory("sluice-kafka-") : builder.workDir;
        Files.createDirectories(workDir);

        try {
            int brokerPort = KafkaNode.freeLoopbackPort();
            int controllerPort = KafkaNode.freeLoopbackPort();
            this.bootstrapServers = "127.0.0.1:" + brokerPort;
            Map<String, String> config = config(brokerPort, controllerPort);
            config.putAll(builder.brokerProperties);
            this.node =
                    new KafkaNode(
                            workDir, config, Uuid.randomUuid().toString(), builder.startTimeout);
            node.start();
        } catch (IOException | RuntimeException e) {
            if (ownsWorkDir) {
                deleteRecursively(workDir);
            }
            throw e;
        }
        // A broker must not outlive the JVM that started it, even when close() is never called.
        this.shutdownHook = new Thread(node::stop, "sluice-kafka-broker-shutdown");
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
        return node.pid();
    }

    /** The broker's stdout and log4j output, for diagnosing a failure. */
    public Path logFile() {
        return node.logFile();
    }

    /**
     * Creates a topic with replication factor 1 and returns once the broker hosts every one of its
     * partitions.
     */
    public void createTopic(String name, int partitions) {
        KafkaAdmin.createTopic(clientProperties(), new NewTopic(name, partitions, (short) 1));
    }

    /** The records written to {@code topic} so far: the sum of its partitions' end offsets. */
    public long records(String topic) {
        return KafkaAdmin.records(clientProperties(), topic);
    }

    @Override
    public void close() {
        node.stop();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException alreadyShuttingDown) {
            // The hook is running or has run; nothing left to undo.
        }
        if (ownsWorkDir) {
            deleteRecursively(workDir);
        }
    }

    /** Blocks until a produce is acknowledged, failing early if the broker process dies. */
    private void awaitReady(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Exception last = null;
        while (System.nanoTime() < deadline) {
            node.checkAlive("Kafka broker");
            try {
                KafkaAdmin.createTopicIfAbsent(
                        clientProperties(), new NewTopic(READINESS_TOPIC, 1, (short) 1));
                KafkaAdmin.produceOne(clientProperties(), READINESS_TOPIC);
                return;
            } catch (RuntimeException e) {
                last = e;
            }
        }
        throw new IllegalStateException(
                "Kafka broker not ready after " + timeout + ": " + last + node.diagnostics(), last);
    }

    private static Map<String, String> config(int brokerPort, int controllerPort) {
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
        config.put("num.partitions", "1");
        config.put("auto.create.topics.enable", "false");
        config.put("offsets.topic.replication.factor", "1");
        config.put("transaction.state.log.replication.factor", "1");
        config.put("transaction.state.log.min.isr", "1");
        config.put("share.coordinator.state.topic.replication.factor", "1");
        config.put("share.coordinator.state.topic.min.isr", "1");
        config.put("group.initial.rebalance.delay.ms", "0");
        return config;
    }

    static void deleteRecursively(Path dir) {
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
