package dev.sluice.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * The demo cluster's compose project, driven from this machine through {@code docker-compose} and
 * {@code docker}: what the cluster's driver and its test do to it (up, down, exec, and the faults:
 * kill, stop, pause, a limit of processors, a host's network cut). Only up, down and logs go
 * through {@code docker-compose}; the rest finds the containers by the labels it puts on them and
 * goes through {@code docker}, because its Python client takes a second or more to start on a
 * loaded machine: a fault meant to land mid-read must not wait that long, and the checks run many
 * times.
 */
final class Compose {
    /** The compose file's health check timeout. */
    private static final Duration HEALTH_CHECK_TIMEOUT = Duration.ofSeconds(5);

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

    /** Starts every service and waits until each one is ready. */
    void up(Duration timeout) throws IOException, InterruptedException, TimeoutException {
        // Every service starts at once and waits for what it needs itself (docker-compose.yml).
        run(timeout, "up", "-d", "--remove-orphans");
        awaitReady(timeout);
    }

    /**
     * Waits until every container of the project runs and, if the compose file gives it a health
     * check, passes it. The checks are run here, each until it passes once, rather than read from
     * Docker's health status: Docker runs them only every 30 s (docker-compose.yml says why).
     */
    void awaitReady(Duration timeout) throws IOException, InterruptedException, TimeoutException {
        long deadline = System.nanoTime() + timeout.toNanos();
        Set<String> ready = new HashSet<>();
        while (true) {
            List<String> waiting = new ArrayList<>();
            List<String> containers = containers();
            for (String container : containers) {
                // ID NAME STATUS [CMD ARG...]: the check is the compose file's test, as Docker
                // would run it.
                String[] fields = container.split(" ", 4);
                String id = fields[0];
                String name = fields[1].substring(1);
                if (!fields[2].equals("running")) {
                    ready.remove(id);
                    waiting.add(name + " " + fields[2]);
                } else if (!ready.contains(id)) {
                    if (fields.length < 4 || passes(id, fields[3])) {
                        ready.add(id);
                    } else {
                        waiting.add(name + " not ready");
                    }
                }
            }
            if (!containers.isEmpty() && waiting.isEmpty()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new TimeoutException("not ready after " + timeout + ": " + waiting);
            }
            TimeUnit.SECONDS.sleep(1);
        }
    }

    /** The project's service containers, each as {@code ID /NAME STATUS [HEALTH CHECK TEST]}. */
    private List<String> containers() throws IOException, InterruptedException {
        List<String> ids = ids("com.docker.compose.oneoff=False");
        if (ids.isEmpty()) {
            return ids;
        }
        List<String> inspect =
                new ArrayList<>(
                        List.of(
                                "docker",
                                "inspect",
                                "-f",
                                // index: a container without a check has no such key.
                                "{{.Id}} {{.Name}} {{.State.Status}}"
                                        + "{{with index .Config \"Healthcheck\"}}"
                                        + "{{range .Test}} {{.}}{{end}}{{end}}"));
        inspect.addAll(ids);
        return lines(output(Duration.ofMinutes(1), inspect));
    }

    /**
     * Runs a health check's test, {@code CMD ARG...} or {@code CMD-SHELL COMMAND}, in a container.
     */
    private boolean passes(String container, String test) throws IOException, InterruptedException {
        String[] words = test.split(" ", 2);
        List<String> command = new ArrayList<>(List.of("docker", "exec", container));
        switch (words[0]) {
            case "CMD" -> command.addAll(List.of(words[1].split(" ")));
            case "CMD-SHELL" -> command.addAll(List.of("/bin/sh", "-c", words[1]));
            default -> throw new IOException("a health check test Docker does not run: " + test);
        }
        try {
            return stream(HEALTH_CHECK_TIMEOUT, line -> {}, command) == 0;
        } catch (IOException e) {
            // Docker counts a check that outlasts its timeout as failed; so does this.
            return false;
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
        List<String> args = new ArrayList<>(List.of("docker", "exec", container(service)));
        args.addAll(List.of(command));
        return stream(timeout, out, args);
    }

    /** {@code docker kill}: SIGKILL to the containers, which stay down until started. */
    void kill(String... services) throws IOException, InterruptedException {
        docker("kill", services);
    }

    void stop(String service) throws IOException, InterruptedException {
        output(
                Duration.ofMinutes(2),
                List.of("docker", "stop", "--time", "10", container(service)));
    }

    /** Starts the containers in the order given: a host's namespace before those joining it. */
    void start(String... services) throws IOException, InterruptedException {
        for (String service : services) {
            docker("start", service);
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
        List<String> ids = ids("com.docker.compose.service=" + service);
        if (ids.size() != 1) {
            throw new IOException(
                    ids.size() + " containers of " + service + " in project " + project);
        }
        return ids.get(0);
    }

    /** The ids of the project's containers, running or not, that also carry {@code label}. */
    private List<String> ids(String label) throws IOException, InterruptedException {
        return lines(
                output(
                        Duration.ofMinutes(1),
                        List.of(
                                "docker",
                                "ps",
                                "-aq",
                                "--filter",
                                "label=com.docker.compose.project=" + project,
                                "--filter",
                                "label=" + label)));
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
