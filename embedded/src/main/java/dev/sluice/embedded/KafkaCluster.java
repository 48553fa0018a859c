package dev.sluice.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.Uuid;

/**
 * Several KRaft Kafka brokers in child JVMs on free loopback ports, with one controller of their
 * own: the multi-broker cluster the tests of replica placement need.
 *
 * <p>Brokers are numbered from 1; broker {@code i} sits in rack {@code rack-i} ({@code
 * broker.rack}) and serves consumers from a replica in their rack ({@code replica.selector.class}
 * is Kafka's {@code RackAwareReplicaSelector}, KIP-392), so a client that gives {@code
 * client.rack=rack-i} reads from broker {@code i} whenever it holds an in-sync replica. The
 * controller is a node of its own, so any broker can be {@linkplain #kill killed} (and {@linkplain
 * #restart started again}) without taking the cluster's metadata with it; it fences a silent broker
 * after 3 s (Kafka's default is 9 s), so a test sees the cluster react in seconds.
 *
 * <p>{@link Builder#build()} returns once every broker has registered and a produce to a topic
 * replicated on all of them was acknowledged by all ({@code acks=all}). Each node keeps its data
 * and log in a folder of its own under one owner-only temporary folder, removed on {@link
 * #close()}.
 */
public final class KafkaCluster implements AutoCloseable {
    private static final String READINESS_TOPIC = "__sluice_ready";
    private static final int CONTROLLER_ID = 0;

    private final Path workDir;
    private final KafkaNode controller;
    private final Map<Integer, KafkaNode> brokers = new TreeMap<>();
    private final Map<Integer, String> addresses = new TreeMap<>();
    private final Thread shutdownHook;

    private KafkaCluster(Builder builder) throws IOException {
        this.workDir = Files.createTempDirectory("sluice-kafka-cluster-");
        // The nodes are made and started together: each formats its storage in a JVM of its own
        // first, which takes a second or two, and the brokers wait for the controller anyway.
        List<CompletableFuture<KafkaNode>> starting = new ArrayList<>();
        try {
            String clusterId = Uuid.randomUuid().toString();
            int controllerPort = KafkaNode.freeLoopbackPort();
            String voters = CONTROLLER_ID + "@127.0.0.1:" + controllerPort;
            starting.add(
                    startNode(
                            workDir.resolve("controller"),
                            controllerConfig(controllerPort, voters),
                            clusterId,
                            builder.startTimeout));
            for (int id = 1; id <= builder.brokers; id++) {
                int port = KafkaNode.freeLoopbackPort();
                addresses.put(id, "127.0.0.1:" + port);
                Map<String, String> config = brokerConfig(id, port, voters, builder.brokers);
                config.putAll(builder.brokerProperties);
                starting.add(
                        startNode(
                                workDir.resolve("broker-" + id),
                                config,
                                clusterId,
                                builder.startTimeout));
            }
            CompletableFuture.allOf(starting.toArray(CompletableFuture[]::new)).join();
        } catch (IOException | RuntimeException e) {
            // Every node that did start is stopped before its folder goes.
            for (CompletableFuture<KafkaNode> node : starting) {
                node.handle((started, error) -> started).join();
                if (!node.isCompletedExceptionally()) {
                    node.join().stop();
                }
            }
            Directories.deleteRecursively(workDir);
            if (e instanceof CompletionException
                    && e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            throw e;
        }
        this.controller = starting.get(0).join();
        for (int id = 1; id <= builder.brokers; id++) {
            brokers.put(id, starting.get(id).join());
        }
        // The nodes must not outlive the JVM that started them, even when close() is never called.
        this.shutdownHook = new Thread(this::stopNodes, "sluice-kafka-cluster-shutdown");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    private static CompletableFuture<KafkaNode> startNode(
            Path dir, Map<String, String> config, String clusterId, Duration timeout) {
        return CompletableFuture.supplyAsync(
                () -> {
                    try {
                        KafkaNode node = new KafkaNode(dir, config, clusterId, timeout);
                        node.start();
                        return node;
                    } catch (IOException e) {
                        throw new UncheckedIOException("cannot start the Kafka node in " + dir, e);
                    }
                });
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Every broker's {@code host:port}, comma-separated, as clients take them. */
    public String bootstrapServers() {
        return String.join(",", addresses.values());
    }

    /** Fresh client properties pointing at the cluster; callers add their own settings. */
    public Properties clientProperties() {
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        return props;
    }

    /** The brokers' ids, 1 to the number of brokers. */
    public Set<Integer> brokerIds() {
        return brokers.keySet();
    }

    /** {@code host:port} of broker {@code id}'s PLAINTEXT listener, as metadata names it. */
    public String address(int id) {
        return checked(id, addresses.get(id));
    }

    /** The rack of broker {@code id}: its {@code broker.rack}, {@code rack-ID}. */
    public String rack(int id) {
        checked(id, addresses.get(id));
        return "rack-" + id;
    }

    /** Broker {@code id}'s stdout and log4j output, for diagnosing a failure. */
    public Path logFile(int id) {
        return checked(id, brokers.get(id)).logFile();
    }

    /**
     * Creates {@code name} with {@code partitions} partitions, each on the brokers {@code replicas}
     * names in that order (the first is the preferred leader), and returns once every replica has
     * its log.
     */
    public void createTopic(String name, int partitions, List<Integer> replicas) {
        for (int id : replicas) {
            checked(id, addresses.get(id));
        }
        Map<Integer, List<Integer>> assignment = new LinkedHashMap<>();
        IntStream.range(0, partitions).forEach(p -> assignment.put(p, List.copyOf(replicas)));
        KafkaAdmin.createTopic(clientProperties(), new NewTopic(name, assignment));
    }

    /** The records written to {@code topic} so far: the sum of its partitions' end offsets. */
    public long records(String topic) {
        return KafkaAdmin.records(clientProperties(), topic);
    }

    /** The broker that leads {@code partition} of {@code topic} now, -1 without one. */
    public int leader(String topic, int partition) {
        TopicDescription description =
                KafkaAdmin.call(
                        clientProperties(),
                        "describing topic " + topic,
                        admin ->
                                admin.describeTopics(List.of(topic))
                                        .allTopicNames()
                                        .get(30, TimeUnit.SECONDS)
                                        .get(topic));
        Node leader = description.partitions().get(partition).leader();
        return leader == null ? -1 : leader.id();
    }

    /** SIGKILL to broker {@code id}: it dies without a word, as a crashed host's broker does. */
    public void kill(int id) {
        checked(id, brokers.get(id)).kill();
    }

    /**
     * Starts broker {@code id} again after {@link #kill}, as a crashed host's broker comes back:
     * the same node id, log folders and port. Returns once its process runs; it rejoins the ISRs as
     * it catches up, which callers wait for.
     */
    public void restart(int id) {
        KafkaNode node = checked(id, brokers.get(id));
        if (node.isAlive()) {
            throw new IllegalStateException("broker " + id + " is running: kill it first");
        }
        try {
            node.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start Kafka broker " + id + " again", e);
        }
    }

    @Override
    public void close() {
        stopNodes();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException alreadyShuttingDown) {
            // The hook is running or has run; nothing left to undo.
        }
        KafkaBroker.deleteRecursively(workDir);
    }

    private void stopNodes() {
        // Brokers first, together: a broker's controlled shutdown asks the controller.
        brokers.values().forEach(KafkaNode::terminate);
        brokers.values().forEach(KafkaNode::stop);
        controller.stop();
    }

    private <T> T checked(int id, T found) {
        if (found == null) {
            throw new IllegalArgumentException(
                    "no broker " + id + "; the cluster has brokers " + brokers.keySet());
        }
        return found;
    }

    /**
     * Blocks until every broker has registered and a produce to a topic on all of them is
     * acknowledged, failing early, with its log, when a node's process dies.
     */
    private void awaitReady(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Exception last = null;
        Set<Integer> registered = Set.of();
        while (System.nanoTime() < deadline) {
            controller.checkAlive("the Kafka controller");
            brokers.forEach((id, node) -> node.checkAlive("Kafka broker " + id));
            try {
                registered =
                        KafkaAdmin.call(
                                clientProperties(),
                                "describing the cluster",
                                admin ->
                                        admin
                                                .describeCluster()
                                                .nodes()
                                                .get(10, TimeUnit.SECONDS)
                                                .stream()
                                                .map(Node::id)
                                                .collect(Collectors.toSet()));
                if (registered.containsAll(brokers.keySet())) {
                    KafkaAdmin.createTopicIfAbsent(
                            clientProperties(),
                            new NewTopic(READINESS_TOPIC, 1, (short) brokers.size()));
                    KafkaAdmin.produceOne(clientProperties(), READINESS_TOPIC);
                    return;
                }
                // Registration takes a heartbeat or two; an admin round trip paces the rest.
                Thread.sleep(50);
            } catch (RuntimeException e) {
                last = e;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while starting the Kafka cluster", e);
            }
        }
        StringBuilder logs = new StringBuilder(controller.diagnostics());
        for (Map.Entry<Integer, KafkaNode> broker : brokers.entrySet()) {
            if (!registered.contains(broker.getKey())) {
                logs.append(broker.getValue().diagnostics());
            }
        }
        throw new IllegalStateException(
                "Kafka cluster not ready after "
                        + timeout
                        + ": brokers registered "
                        + registered
                        + " of "
                        + brokers.keySet()
                        + (last == null ? "" : "; last error: " + last)
                        + logs,
                last);
    }

    private static Map<String, String> controllerConfig(int port, String voters) {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("process.roles", "controller");
        config.put("node.id", String.valueOf(CONTROLLER_ID));
        config.put("controller.quorum.voters", voters);
        config.put("listeners", "CONTROLLER://127.0.0.1:" + port);
        config.put("controller.listener.names", "CONTROLLER");
        config.put("listener.security.protocol.map", "CONTROLLER:PLAINTEXT");
        // A broker whose heartbeats stop is fenced, and leaves every ISR, after this long.
        config.put("broker.session.timeout.ms", "3000");
        return config;
    }

    private static Map<String, String> brokerConfig(
            int id, int port, String voters, int brokerCount) {
        String replicas = String.valueOf(brokerCount);
        Map<String, String> config = new LinkedHashMap<>();
        config.put("process.roles", "broker");
        config.put("node.id", String.valueOf(id));
        config.put("controller.quorum.voters", voters);
        config.put("listeners", "PLAINTEXT://127.0.0.1:" + port);
        config.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
        config.put("controller.listener.names", "CONTROLLER");
        config.put("inter.broker.listener.name", "PLAINTEXT");
        config.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        config.put("broker.rack", "rack-" + id);
        config.put(
                "replica.selector.class",
                "org.apache.kafka.common.replica.RackAwareReplicaSelector");
        config.put("broker.heartbeat.interval.ms", "500");
        config.put("num.partitions", "1");
        config.put("auto.create.topics.enable", "false");
        config.put("offsets.topic.replication.factor", replicas);
        config.put("transaction.state.log.replication.factor", replicas);
        config.put("transaction.state.log.min.isr", "1");
        config.put("share.coordinator.state.topic.replication.factor", replicas);
        config.put("share.coordinator.state.topic.min.isr", "1");
        config.put("group.initial.rebalance.delay.ms", "0");
        return config;
    }

    /** Settings of a cluster to start. */
    public static final class Builder {
        private final Map<String, String> brokerProperties = new LinkedHashMap<>();
        private int brokers = 3;
        private Duration startTimeout = Duration.ofSeconds(60);

        private Builder() {}

        /** How many brokers, 1 or more; 3 unless set. */
        public Builder brokers(int count) {
            if (count < 1) {
                throw new IllegalArgumentException("brokers must be at least 1: " + count);
            }
            this.brokers = count;
            return this;
        }

        /** Overrides one {@code server.properties} setting of every broker. */
        public Builder brokerProperty(String key, String value) {
            brokerProperties.put(key, value);
            return this;
        }

        public Builder startTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("startTimeout must be positive: " + timeout);
            }
            this.startTimeout = timeout;
            return this;
        }

        /** Starts the cluster and returns once every broker has acknowledged a produce. */
        public KafkaCluster build() {
            KafkaCluster cluster;
            try {
                cluster = new KafkaCluster(this);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start the Kafka cluster", e);
            }
            try {
                cluster.awaitReady(startTimeout);
                return cluster;
            } catch (RuntimeException e) {
                cluster.close();
                throw e;
            }
        }
    }
}
