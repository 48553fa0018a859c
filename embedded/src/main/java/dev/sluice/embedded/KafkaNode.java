package dev.sluice.embedded;

import java.io.IOException;
import java.io.InputStream;
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
import java.util.concurrent.TimeUnit;

/**
 * One KRaft node (broker, controller or both) of Apache Kafka in a child JVM: its {@code
 * server.properties} and log4j configuration in its own folder, its storage formatted, its process
 * started, stopped or killed. {@link KafkaBroker} runs one combined node, {@link KafkaCluster} a
 * controller and several brokers; what makes a node ready is theirs to check.
 *
 * <p>The child JVM keeps the broker's jars (Scala, Jackson, log4j) off the caller's classpath; its
 * classpath is resolved by Maven at build time into {@code kafka-broker.classpath}.
 */
final class KafkaNode {
    private static final String CLASSPATH_RESOURCE = "kafka-broker.classpath";

    private final Path workDir;
    private final Path logFile;
    private final Path config;
    private final Path log4jConfig;
    private final String classpath;
    private Process process;

    /**
     * Writes the node's configuration into {@code workDir} (created when missing) and formats its
     * storage for {@code clusterId}, which every node of a cluster shares; {@link #start()} runs
     * it.
     */
    KafkaNode(Path workDir, Map<String, String> properties, String clusterId, Duration timeout)
            throws IOException {
        this.workDir = Files.createDirectories(workDir);
        this.logFile = workDir.resolve("broker.log");
        Map<String, String> withData = new LinkedHashMap<>();
        withData.put("log.dirs", workDir.resolve("data").toString());
        withData.putAll(properties);
        this.config = writeConfig(withData);
        this.log4jConfig = writeLog4jConfig();
        this.classpath = brokerClasspath();
        format(clusterId, timeout);
    }

    /** A port nobody listens on now, on the loopback interface. */
    static int freeLoopbackPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    /** Starts the node's JVM; its stdout and log4j output go to {@link #logFile()}. */
    void start() throws IOException {
        process =
                javaCommand("kafka.Kafka", config.toString())
                        .redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                        .start();
    }

    boolean isAlive() {
        return process != null && process.isAlive();
    }

    /** Fails naming the node and the end of its log when its process has exited. */
    void checkAlive(String name) {
        if (process != null && !process.isAlive()) {
            throw new IllegalStateException(
                    name + " exited with code " + process.exitValue() + diagnostics());
        }
    }

    long pid() {
        return process.pid();
    }

    Path logFile() {
        return logFile;
    }

    /** SIGTERM without waiting, so that several nodes shut down at once; {@link #stop()} waits. */
    void terminate() {
        if (isAlive()) {
            process.destroy();
        }
    }

    /** SIGTERM, then SIGKILL when the node has not stopped within 15 s. */
    void stop() {
        if (!isAlive()) {
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

    /** SIGKILL, and waits for the process to be gone: a broker that dies without a word. */
    void kill() {
        if (!isAlive()) {
            return;
        }
        try {
            process.destroyForcibly().waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while killing a Kafka node", e);
        }
    }

    /** The last lines of the node's log, for an error message. */
    String diagnostics() {
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

    private Path writeConfig(Map<String, String> properties) throws IOException {
        StringBuilder text = new StringBuilder();
        properties.forEach((key, value) -> text.append(key).append('=').append(value).append('\n'));
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
    private void format(String clusterId, Duration timeout) throws IOException {
        Process format =
                javaCommand(
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

    private ProcessBuilder javaCommand(String mainClass, String... args) {
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
        try (InputStream in = KafkaNode.class.getResourceAsStream(CLASSPATH_RESOURCE)) {
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
}
