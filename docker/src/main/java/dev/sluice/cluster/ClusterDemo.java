package dev.sluice.cluster;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * Builds the demo cluster's image, brings the cluster up on this machine's Docker, and runs its
 * checks and faults, printing their figures ({@code ./sluice cluster demo}; docs/cluster.md).
 * {@code ClusterIT} runs the same in the README's test command. The checks run inside the cluster
 * ({@link ClusterChecks}, in the client container); the faults are done from here, to a job that is
 * running, at the speed the cluster carries with a host fewer: a TaskManager killed, paused for 15
 * s, limited to a quarter of a processor; a Kafka broker stopped; a daemon killed with SIGKILL;
 * every container of the host that leads the control topics killed; that host's network cut for 20
 * s. The dashboard ({@link Dashboard}) is looked at from here too, in headless Chromium.
 *
 * <p>{@code --root DIR build | up | demo | down [--project NAME] [--keep]}
 */
public final class ClusterDemo {
    private static final Duration UP_TIMEOUT = Duration.ofMinutes(10);
    private static final Duration CHECK_TIMEOUT = Duration.ofMinutes(15);
    // A fault's job: 20 MB per channel, long enough at the survivable speed for a fault to strike
    // mid-job and its remedy to end within it, short enough for the README's test command.
    private static final String FAULT_JOB = "B/8";
    private static final Duration PAUSE = Duration.ofSeconds(15);
    private static final Duration NETWORK_CUT = Duration.ofSeconds(20);
    private static final Duration DASHBOARD_TIMEOUT = Duration.ofMinutes(2);

    /** One step of the demo and how it went. */
    public record Step(String name, boolean passed, double seconds) {}

    private final Path root;
    private final ClusterImage image;
    private final Compose compose;
    private final PrintStream out;
    private final List<Step> steps = new ArrayList<>();

    ClusterDemo(Path root, String project, Map<String, String> environment, PrintStream out) {
        this.root = root;
        this.image = new ClusterImage(root);
        this.compose = new Compose(root.resolve("docker/docker-compose.yml"), project, environment);
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        ClusterDemo demo;
        String command;
        boolean keep;
        try {
            Arguments options = Arguments.parse(args);
            if (options.positional().size() != 1) {
                throw new IllegalArgumentException(
                        "usage: --root DIR build | up | demo | down [--project NAME] [--keep"
                                + " true]");
            }
            command = options.positional().get(0);
            keep = options.flag("--keep");
            demo =
                    new ClusterDemo(
                            Path.of(options.required("--root")),
                            options.optional("--project", "sluice"),
                            Map.of(),
                            System.out);
        } catch (IllegalArgumentException e) {
            Arguments.exit("cluster", e);
            return;
        }
        boolean ok = true;
        switch (command) {
            case "build" -> demo.build();
            case "up" -> demo.up();
            case "down" -> demo.compose.down();
            case "demo" -> ok = demo.demo(keep);
            default ->
                    Arguments.exit(
                            "cluster", new IllegalArgumentException("unknown command " + command));
        }
        System.exit(ok ? 0 : 1);
    }

    /** Steps so far, in order. */
    List<Step> steps() {
        return List.copyOf(steps);
    }

    void build() throws Exception {
        step(
                "image build",
                () -> {
                    // What the build is doing, not each package apt installs.
                    image.build(
                            line -> {
                                if (line.startsWith("base-image:") || line.startsWith("Step ")) {
                                    out.println("  " + line);
                                }
                            });
                    return true;
                });
    }

    /** Starts the cluster; its client creates the topics and submits the generation job. */
    void up() throws Exception {
        step(
                "cluster up",
                () -> {
                    compose.up(UP_TIMEOUT);
                    // What the client's setup did: the topics, the generation job, its producers.
                    compose.logs("client", 20)
                            .lines()
                            .filter(line -> line.contains("|"))
                            .forEach(
                                    line ->
                                            out.println(
                                                    "  " + line.substring(line.indexOf('|') + 2)));
                    out.println("  dashboard  " + dashboard().page());
                    return true;
                });
    }

    /** The dashboard of the cluster that is up, at the port its Prometheus got on loopback. */
    private Dashboard dashboard() throws IOException, InterruptedException {
        return new Dashboard(URI.create("http://" + compose.port("prometheus", 9090)));
    }

    /** Everything, from the image to the last fault; true when every step passed. */
    boolean demo(boolean keepUp) throws Exception {
        try {
            build();
            compose.down();
            up();
            // A small job first, as a press warms up: the TaskManagers' JIT compiles the RIP and
            // every hop of the path on it, not on the first measured job's first tasks (a cold
            // start starved a stream of that job now and then).
            check(
                    "warm-up",
                    "printing",
                    "--jobs",
                    "A/2",
                    "--speed",
                    "4",
                    "--allow-starvation",
                    "true");
            // The dashboard is looked at while (a) prints, once its streams have 20 s of samples.
            Dashboard dashboard = dashboard();
            Path screenshot = root.resolve("docker/target/dashboard.png");
            CompletableFuture<Dashboard.Seen> watched =
                    CompletableFuture.supplyAsync(
                            () -> {
                                try {
                                    return dashboard.check(screenshot, DASHBOARD_TIMEOUT);
                                } catch (Exception e) {
                                    return new Dashboard.Seen(Set.of(), 0, List.of(e.toString()));
                                }
                            });
            // Half a megabyte a second per channel, 4 MB/s for the eight streams: about 40 % of
            // what the whole pipeline generates on two cores (the capacity check below measures
            // 9-16 MB/s in all, docs/cluster.md), so that a stream starves only when the cluster
            // stalls for a task's worth of printing. At 1 MB/s (about 75 %) one CI run in four
            // starved a stream once or twice.
            check("a. printing across hosts", "printing", "--jobs", "A,B/8", "--speed", "0.5");
            step(
                    "e. dashboard during (a)",
                    () -> {
                        Dashboard.Seen seen = watched.get();
                        out.println("  dashboard  " + dashboard.page());
                        out.printf(
                                "  seen       %d streams printing, %d of them shown printing"
                                        + " with a delivered rate, each with 4 charts of samples;"
                                        + " screenshot %s%n",
                                seen.printing().size(), seen.shownPrinting(), screenshot);
                        seen.wrong().forEach(line -> out.println("  WRONG      " + line));
                        return seen.wrong().isEmpty();
                    });
            check("b. SQL through the Gateway", "sql", "--records", "100000");
            // The faults run at the speed the cluster carries with a host fewer, measured here,
            // on this machine: each must end with no stream starved (docs/cluster.md, "Checks").
            String speed = survivableSpeed();
            // Locality after the capacity job, so that it counts that job's ~90 tasks beside the
            // ~50 of the printing jobs: on 50 alone the share ranged 0.27-0.49 from run to run
            // when the scheduler was host-blind for paced streams, across the threshold of a
            // third; with their local stream preferred within a task's time (docs/generation.md,
            // "Scheduling policy"), 0.45 of 138 on a loaded machine.
            check("c. generation locality", "locality");
            // The job users copy, through a fault (examples/flink-job's CountJob checkpoints and
            // restarts): the TaskManager of a reader killed as it begins to read, and started
            // again at once, so its slots come back. After (c): the lost TaskManager's producer of
            // the generation job may come back on another host, and (c) counts on where they are.
            step(
                    "d. SluiceSource job, TM killed",
                    () -> {
                        boolean ok =
                                checks(
                                        valueOf("strike-taskmanager", this::killAndStart),
                                        "source",
                                        "--records",
                                        "2000000",
                                        "--strike",
                                        "true");
                        compose.awaitReady(UP_TIMEOUT);
                        return ok;
                    });
            // Each TaskManager fault strikes one that holds a producer at the time.
            String[] struck = {null};
            fault(
                    "d. TaskManager killed",
                    "tm",
                    speed,
                    () -> compose.kill(struck[0] = producersTaskManager()),
                    () -> compose.start(struck[0]));
            fault(
                    "d. TaskManager paused 15 s",
                    "pause",
                    speed,
                    () -> {
                        // A straggler: 15 s is the fault, less than the cluster's heartbeat
                        // timeout (docker/conf/flink-config.yaml), so Flink never declares the
                        // TaskManager lost and only speculation can make up for it.
                        String paused = producersTaskManager();
                        compose.pause(paused);
                        Thread.sleep(PAUSE.toMillis());
                        compose.unpause(paused);
                    },
                    () -> {});
            fault(
                    "d. TaskManager at 0.25 CPU",
                    "cpus",
                    speed,
                    () -> compose.limitCpus(struck[0] = producersTaskManager(), 0.25),
                    () -> compose.limitCpus(struck[0], Runtime.getRuntime().availableProcessors()));
            fault(
                    "d. Kafka broker stopped",
                    "broker",
                    speed,
                    () -> compose.stop("kafka-2"),
                    () -> compose.start("kafka-2"));
            fault(
                    "d. sluice-brokerd killed",
                    "daemon",
                    speed,
                    // SIGKILL to the daemon, not its container: the container's restart policy
                    // brings a new daemon up on the same host, shared memory and socket folder.
                    () -> exec("brokerd-1", "pkill", "-KILL", "-x", "sluice-brokerd"),
                    () -> {});
            // The host that leads the control topics (jobs, statuses, delivery progress) and,
            // for these faults, the chunk topic of a stream read on another host, from the
            // follower there: lost with every container of it, then, back, cut off for 20 s.
            // Its producer (Flink restores the lost one elsewhere, and does not move it back),
            // its broker and its leadership go; every reader is elsewhere and must not starve
            // while the leadership moves.
            String host = Topology.CONTROL_HOST;
            String elsewhere = Topology.READ_ELSEWHERE + "=" + host;
            String[] lost = Topology.servicesOf(host).toArray(String[]::new);
            fault(
                    "d. host lost",
                    "host",
                    speed,
                    () -> checks("leaders", "--chunks-of", elsewhere),
                    () -> compose.kill(lost),
                    () -> compose.start(lost));
            fault(
                    "d. host's network cut 20 s",
                    "cut",
                    speed,
                    () -> checks("leaders", "--chunks-of", elsewhere),
                    () -> {
                        var networks = compose.disconnect(host);
                        Thread.sleep(NETWORK_CUT.toMillis());
                        compose.reconnect(host, networks);
                    },
                    // The stream's chunk topic led from its reader's host again.
                    () ->
                            checks(
                                    "leaders",
                                    "--chunks-of",
                                    Topology.READ_ELSEWHERE
                                            + "="
                                            + Topology.OUTPUT_LOCATION_HOSTS.get(
                                                    Topology.READ_ELSEWHERE)));
        } catch (Exception e) {
            out.println("cluster: " + e);
            steps.add(new Step(e.getClass().getSimpleName(), false, 0));
        } finally {
            summary();
            if (!keepUp) {
                compose.down();
            }
        }
        return !steps.isEmpty() && steps.stream().allMatch(Step::passed);
    }

    /**
     * The speed per channel, in MB/s, that the cluster carries with a host fewer, from the {@code
     * capacity} check; that check's step fails, and the faults after it, when it cannot tell.
     */
    private String survivableSpeed() throws Exception {
        String[] speed = {null};
        step(
                "capacity",
                () -> {
                    boolean ok =
                            checks(
                                    valueOf("survivable-speed", value -> speed[0] = value),
                                    "capacity");
                    return ok && speed[0] != null;
                });
        if (speed[0] == null) {
            throw new IllegalStateException("the capacity check measured no speed");
        }
        return speed[0];
    }

    /**
     * The TaskManager of a producer of the generation job now, of those that hold one the one with
     * the fewest (the lowest-numbered host among equals): a fault meant for a producer must find
     * one there, and after a failover Flink may have left a TaskManager without any (the {@code
     * producers} check).
     */
    private String producersTaskManager() throws Exception {
        List<String> hosts = new ArrayList<>();
        boolean ok =
                checks(
                        valueOf("producer-hosts", value -> hosts.addAll(List.of(value.split(" ")))),
                        "producers");
        if (!ok || hosts.isEmpty()) {
            throw new IllegalStateException("the producers check found no producer");
        }
        Map<String, Integer> producers = new TreeMap<>();
        hosts.forEach(host -> producers.merge(host, 1, Integer::sum));
        String host =
                producers.entrySet().stream()
                        .min(Map.Entry.comparingByValue())
                        .orElseThrow()
                        .getKey();
        out.println("  strikes " + Topology.taskManagerOf(host) + ", producers on " + hosts);
        return Topology.taskManagerOf(host);
    }

    /**
     * A fault during a running job: a print job read at {@code speed} MB/s per channel, with the
     * buffer that rides out a producer's loss, is submitted; {@code strike} happens once its first
     * bytes were delivered, while its producers still compute, and the job must still end with
     * every channel complete, in order, once, equal to the sequential run and never starved; then
     * {@code heal}.
     */
    private void fault(String name, String id, String speed, Action strike, Action heal)
            throws Exception {
        fault(name, id, speed, () -> true, strike, heal);
    }

    /** A fault that needs the cluster in a certain state first: {@code prepare} makes it so. */
    private void fault(
            String name, String id, String speed, Check prepare, Action strike, Action heal)
            throws Exception {
        String prefix = "fault-" + id + "-" + System.currentTimeMillis() % 100_000;
        step(
                name,
                () -> {
                    if (!prepare.run()
                            || !checks(
                                    "printing",
                                    "--jobs",
                                    FAULT_JOB,
                                    "--speed",
                                    speed,
                                    "--buffer",
                                    "producer-loss",
                                    "--prefix",
                                    prefix,
                                    "--submit-only",
                                    "true")) {
                        return false;
                    }
                    out.println("  fault: " + name);
                    strike.run();
                    boolean ok =
                            checks(
                                    "printing",
                                    "--await",
                                    prefix + "." + FAULT_JOB.replace('/', '-'),
                                    "--speed",
                                    speed,
                                    "--buffer",
                                    "producer-loss");
                    heal.run();
                    compose.awaitReady(UP_TIMEOUT);
                    return ok;
                });
    }

    /** A fault a check asks for while it runs: the service killed, then started again. */
    private void killAndStart(String service) {
        out.println("  fault: " + service + " killed, then started again");
        try {
            compose.kill(service);
            compose.start(service);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private void check(String name, String... args) throws Exception {
        step(name, () -> checks(args));
    }

    private boolean checks(String... args) throws Exception {
        return checks(line -> out.println("  " + line), args);
    }

    private boolean checks(Consumer<String> lines, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("sluice-node", "check"));
        command.addAll(List.of(args));
        return compose.exec(CHECK_TIMEOUT, lines, "client", command.toArray(String[]::new)) == 0;
    }

    /**
     * The lines of a check that prints a value for this driver as {@code key VALUE}: the value goes
     * to {@code value}, every other line is printed.
     */
    private Consumer<String> valueOf(String key, Consumer<String> value) {
        return line -> {
            if (line.startsWith(key + " ")) {
                value.accept(line.substring(key.length() + 1));
            } else {
                out.println("  " + line);
            }
        };
    }

    private void exec(String service, String... command) throws Exception {
        int code = compose.exec(Duration.ofMinutes(1), out::println, service, command);
        if (code != 0) {
            throw new IllegalStateException(
                    String.join(" ", command) + " in " + service + " exited " + code);
        }
    }

    private void step(String name, Check check) throws Exception {
        out.println("== " + name);
        long started = System.nanoTime();
        boolean passed = false;
        try {
            passed = check.run();
        } finally {
            Step step = new Step(name, passed, (System.nanoTime() - started) / 1e9);
            steps.add(step);
            out.printf(
                    Locale.ROOT,
                    "== %s: %s in %.1f s%n",
                    name,
                    passed ? "passed" : "FAILED",
                    step.seconds());
        }
    }

    private void summary() {
        out.println();
        out.printf("%-30s %-7s %8s%n", "step", "result", "seconds");
        for (Step step : steps) {
            out.printf(
                    Locale.ROOT,
                    "%-30s %-7s %8.1f%n",
                    step.name(),
                    step.passed() ? "passed" : "FAILED",
                    step.seconds());
        }
    }

    @FunctionalInterface
    private interface Check {
        boolean run() throws Exception;
    }

    @FunctionalInterface
    private interface Action {
        void run() throws Exception;
    }
}
