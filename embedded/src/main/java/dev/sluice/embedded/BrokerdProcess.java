package dev.sluice.embedded;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * A real {@code sluice-brokerd} in a child process, for the integration tests, the benchmarks and
 * the demo. {@link #start} returns once the daemon logged {@code event=ready}, so its socket
 * accepts connections; its stderr (one logfmt line per event) goes to {@link #logFile()} and to an
 * optional listener. The binary is {@code sluice-brokerd} in the directory the system property
 * {@code sluice.brokerd.bin} names, unless a path is given.
 */
public final class BrokerdProcess implements AutoCloseable {
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);

    private final List<String> command;
    private final Path socket;
    private final Path logFile;
    private final Consumer<String> listener;
    private volatile Process process;
    private String metricsAddress;
    // A daemon must not outlive the JVM that started it, even when close() is never called.
    private final Thread shutdownHook = new Thread(this::destroyOnExit, "sluice-brokerd-shutdown");

    private BrokerdProcess(
            List<String> command, Path socket, Path logFile, Consumer<String> listener) {
        this.command = command;
        this.socket = socket;
        this.logFile = logFile;
        this.listener = listener;
    }

    /** The binary the system property {@code sluice.brokerd.bin} points at. */
    public static Path defaultBinary() {
        String dir = System.getProperty("sluice.brokerd.bin");
        if (dir == null) {
            throw new IllegalStateException(
                    "set -Dsluice.brokerd.bin to the directory of sluice-brokerd");
        }
        return Path.of(dir, "sluice-brokerd");
    }

    /**
     * Starts the daemon on {@code socket}, with metrics on a free loopback port and {@code
     * settings} as {@code -X key=value} (sluice.* settings and librdkafka properties alike).
     */
    public static BrokerdProcess start(
            Path binary, String bootstrapServers, Path socket, Map<String, String> settings)
            throws IOException {
        return start(binary, bootstrapServers, socket, settings, line -> {});
    }

    /** As above; {@code listener} sees every log line of the daemon, across restarts. */
    public static BrokerdProcess start(
            Path binary,
            String bootstrapServers,
            Path socket,
            Map<String, String> settings,
            Consumer<String> listener)
            throws IOException {
        List<String> command =
                new ArrayList<>(
                        List.of(
                                binary.toString(),
                                "--bootstrap-servers",
                                bootstrapServers,
                                "--socket",
                                socket.toString(),
                                "--metrics",
                                "127.0.0.1:0"));
        settings.forEach(
                (key, value) -> {
                    command.add("-X");
                    command.add(key + "=" + value);
                });
        Path logFile = socket.resolveSibling(socket.getFileName() + ".log");
        BrokerdProcess daemon = new BrokerdProcess(List.copyOf(command), socket, logFile, listener);
        daemon.launch();
        Runtime.getRuntime().addShutdownHook(daemon.shutdownHook);
        return daemon;
    }

    private void destroyOnExit() {
        Process running = process;
        if (running != null && running.isAlive()) {
            running.destroy();
        }
    }

    private void launch() throws IOException {
        CompletableFuture<String> ready = new CompletableFuture<>();
        process =
                new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        Thread pump =
                new Thread(() -> copyLog(process, ready), "sluice-brokerd-log-" + process.pid());
        pump.setDaemon(true);
        pump.start();
        try {
            String line = ready.get(READY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            metricsAddress = field(line, "metrics");
        } catch (ExecutionException | TimeoutException e) {
            process.destroyForcibly();
            throw new IllegalStateException(
                    "sluice-brokerd did not get ready: " + e.getMessage() + "; log: " + logFile, e);
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting sluice-brokerd", e);
        }
    }

    private void copyLog(Process running, CompletableFuture<String> ready) {
        try (BufferedReader lines =
                new BufferedReader(
                        new InputStreamReader(running.getErrorStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = lines.readLine()) != null; ) {
                Files.writeString(
                        logFile, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
                listener.accept(line);
                if (line.contains(" event=ready ")) {
                    ready.complete(line);
                }
            }
            ready.completeExceptionally(
                    new IllegalStateException("exited with " + running.waitFor()));
        } catch (IOException e) {
            ready.completeExceptionally(new UncheckedIOException(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String field(String line, String key) {
        for (String pair : line.split(" ")) {
            if (pair.startsWith(key + "=")) {
                return pair.substring(key.length() + 1);
            }
        }
        return null;
    }

    public Path socket() {
        return socket;
    }

    public long pid() {
        return process.pid();
    }

    /** {@code 127.0.0.1:PORT} of its Prometheus endpoint. */
    public String metricsAddress() {
        return metricsAddress;
    }

    /**
     * The sum of the daemon's metric {@code name} over its labels, read from its Prometheus
     * endpoint now (docs/brokerd.md, "Metrics"); 0 while it has no sample of it.
     */
    public double metric(String name) throws IOException, InterruptedException {
        HttpResponse<String> response =
                HttpClient.newHttpClient()
                        .send(
                                HttpRequest.newBuilder(
                                                URI.create("http://" + metricsAddress + "/metrics"))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
        double sum = 0;
        for (String line : response.body().split("\n")) {
            // A sample is the name, its labels in braces if any, a space and the value.
            if (line.startsWith(name + "{") || line.startsWith(name + " ")) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    public Path logFile() {
        return logFile;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** SIGTERM, then waits for the clean exit; returns its exit code. */
    public int stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
        return process.exitValue();
    }

    /** SIGKILL: the daemon gets no chance to commit or clean up. */
    public void kill() throws InterruptedException {
        process.destroyForcibly().waitFor();
    }

    /** Starts the same command again, after a stop or a kill. */
    public void restart() throws IOException {
        if (process.isAlive()) {
            throw new IllegalStateException("sluice-brokerd is still running");
        }
        launch();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            stop();
        }
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // The hook runs, or ran, on its own.
        }
    }
}
