package dev.sluice.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * The demo cluster's compose project, driven from this machine through {@code docker-compose} and
 * {@code docker}: what the cluster's driver and its test do to it (up, down, exec, and the faults:
 * kill, stop, pause, a limit of processors, a host's network cut).
 */
final class Compose {
    private final Path file;
    private final String project;
    private final Map<String, String> environment;

    /**
     * @param file docker/docker-compose.yml
     * @param project the compose project name: its containers, network and volumes are named by it
     * @param environment variables the compose file reads (image, Flink UI port)
     */
    Compose(Path file, String project, Map<String, String> environment) {
        this.file = file;
        this.project = project;
        this.environment = Map.copyOf(environment);
    }

    /** Starts every service and waits until each one's health check passes. */
    void up(Duration timeout) throws IOException, InterruptedException, TimeoutException {
        // Compose starts a service once those it depends on are healthy; the last ones are
        // waited for here (docker-compose 1.29 has no --wait).
        run(timeout, "up", "-d", "--remove-orphans");
        awaitHealthy(timeout);
    }

    /** Waits until every container of the project is healthy, or running if it has no check. */
    void awaitHealthy(Duration timeout) throws IOException, InterruptedException, TimeoutException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            List<String> ids = lines(output(Duration.ofMinutes(1), compose("ps", "-q")));
            List<String> states = new ArrayList<>();
            if (!ids.isEmpty()) {
                List<String> inspect =
                        new ArrayList<>(
                                List.of(
                                        "docker",
                                        "inspect",
                                        "-f",
                                        "{{.Name}} {{if .State.Health}}{{.State.Health.Status}}"
                                                + "{{else}}{{.State.Status}}{{end}}"));
                inspect.addAll(ids);
                states = lines(output(Duration.ofMinutes(1), inspect));
            }
            List<String> waiting =
                    states.stream()
                            .filter(s -> !s.endsWith(" healthy") && !s.endsWith(" running"))
                            .toList();
            if (!ids.isEmpty() && waiting.isEmpty()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new TimeoutException("not healthy after " + timeout + ": " + waiting);
            }
            TimeUnit.SECONDS.sleep(1);
        }
    }

    /** Stops and removes the project's containers, network and volumes. */
    void down() throws IOException, InterruptedException {
        run(Duration.ofMinutes(3), "down", "-v", "--remove-orphans", "--timeout", "5");
    }

    /**
     * Runs {@code command} in {@code service}'s container without a terminal, its output lines
     * passed to {@code out} as they come; returns the exit code.
     */
    int exec(Duration timeout, Consumer<String> out, String service, String... command)
            throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(List.of("exec", "-T", service));
        args.addAll(List.of(command));
        return stream(timeout, out, compose(args.toArray(String[]::new)));
    }

    /**
     * {@code docker kill}: SIGKILL to the containers, which stay down until started. Through {@code
     * docker}, not {@code docker-compose}, as pause and unpause are: the Python client takes a
     * second or more to start on a loaded machine, and a fault meant to land mid-read must not wait
     * that long.
     */
    void kill(String... services) throws IOException, InterruptedException {
        docker("kill", services);
    }

    void stop(String service) throws IOException, InterruptedException {
        run(Duration.ofMinutes(2), "stop", "--timeout", "10", service);
    }

    /** Starts the containers in the order given: a host's namespace before those joining it. */
    void start(String... services) throws IOException, InterruptedException {
        for (String service : services) {
            run(Duration.ofMinutes(2), "start", service);
        }
    }

    void pause(String service) throws IOException, InterruptedException {
        docker("pause", service);
    }

    void unpause(String service) throws IOException, InterruptedException {
        docker("unpause", service);
    }

    /** {@code docker VERB} on the containers of {@code services}. */
    private void docker(String verb, String... services) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("docker", verb));
        for (String service : services) {
            command.add(container(service));
        }
        output(Duration.ofMinutes(1), command);
    }

    /**
     * Cuts the network of {@code host}, a service whose namespace the host's other containers share
     * (docker-compose.yml): {@code docker network disconnect} from each network it is on, which are
     * returned for {@link #reconnect}.
     */
    List<String> disconnect(String host) throws IOException, InterruptedException {
        String container = container(host);
        List<String> networks =
                lines(
                        output(
                                Duration.ofMinutes(1),
                                List.of(
                                        "docker",
                                        "inspect",
                                        "-f",
                                        "{{range $net, $conf := .NetworkSettings.Networks}}"
                                                + "{{println $net}}{{end}}",
                                        container)));
        for (String network : networks) {
            output(
                    Duration.ofMinutes(1),
                    List.of("docker", "network", "disconnect", network, container));
        }
        return networks;
    }

    /**
     * Connects {@code host} again to {@code networks} under its service name, the alias its peers
     * reach it by: its address may be another one now, and its name finds it.
     */
    void reconnect(String host, List<String> networks) throws IOException, InterruptedException {
        String container = container(host);
        for (String network : networks) {
            output(
                    Duration.ofMinutes(1),
                    List.of("docker", "network", "connect", "--alias", host, network, container));
        }
    }

    /** Limits the service's container to {@code cpus} of this machine's processors. */
    void limitCpus(String service, double cpus) throws IOException, InterruptedException {
        output(
                Duration.ofMinutes(1),
                List.of("docker", "update", "--cpus", Double.toString(cpus), container(service)));
    }

    /** Where this machine reaches {@code service}'s {@code port}: {@code 127.0.0.1:PORT}. */
    String port(String service, int port) throws IOException, InterruptedException {
        List<String> bound =
                lines(
                        output(
                                Duration.ofMinutes(1),
                                List.of("docker", "port", container(service), port + "/tcp")));
        if (bound.isEmpty()) {
            throw new IOException(service + " publishes no port " + port);
        }
        return bound.get(0);
    }

    /** The container of {@code service}, found by the labels docker-compose puts on it. */
    private String container(String service) throws IOException, InterruptedException {
        List<String> ids =
                lines(
                        output(
                                Duration.ofMinutes(1),
                                List.of(
                                        "docker",
                                        "ps",
                                        "-aq",
                                        "--filter",
                                        "label=com.docker.compose.project=" + project,
                                        "--filter",
                                        "label=com.docker.compose.service=" + service)));
        if (ids.size() != 1) {
            throw new IOException(
                    ids.size() + " containers of " + service + " in project " + project);
        }
        return ids.get(0);
    }

    /** The project's log of {@code service}, its last lines. */
    String logs(String service, int lines) throws IOException, InterruptedException {
        return output(
                Duration.ofMinutes(1),
                compose("logs", "--no-color", "--tail", "" + lines, service));
    }

    private void run(Duration timeout, String... args) throws IOException, InterruptedException {
        StringBuilder output = new StringBuilder();
        int code = stream(timeout, line -> output.append(line).append('\n'), compose(args));
        if (code != 0) {
            throw new IOException(
                    "docker-compose "
                            + String.join(" ", args)
                            + " exited "
                            + code
                            + ":\n"
                            + output);
        }
    }

    private List<String> compose(String... args) {
        List<String> command =
                new ArrayList<>(
                        List.of(
                                "docker-compose",
                                "-f",
                                file.toString(),
                                "-p",
                                project,
                                "--ansi",
                                "never"));
        command.addAll(List.of(args));
        return command;
    }

    private String output(Duration timeout, List<String> command)
            throws IOException, InterruptedException {
        StringBuilder output = new StringBuilder();
        int code = stream(timeout, line -> output.append(line).append('\n'), command);
        if (code != 0) {
            throw new IOException(String.join(" ", command) + " exited " + code + ":\n" + output);
        }
        return output.toString();
    }

    private int stream(Duration timeout, Consumer<String> out, List<String> command)
            throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().putAll(environment);
        Process process = builder.start();
        Thread reader =
                new Thread(
                        () -> {
                            try (var lines = process.inputReader(StandardCharsets.UTF_8).lines()) {
                                lines.forEach(out);
                            }
                        },
                        "sluice-compose-output");
        reader.start();
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            reader.join();
            throw new IOException(String.join(" ", command) + ": no end after " + timeout);
        }
        reader.join();
        return process.exitValue();
    }

    private static List<String> lines(String text) {
        return text.lines().map(String::strip).filter(s -> !s.isEmpty()).toList();
    }
}
