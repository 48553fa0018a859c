package dev.sluice.cluster;

import dev.sluice.printing.TestChart;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Builds the cluster's image from the project's build outputs: stages them under {@code
 * docker/target/image}, makes sure the base image is there ({@code docker/base-image.sh}), and runs
 * {@code docker build}. The build outputs come from {@code ./sluice build} (or the reactor the test
 * runs in), never from a download. The daemon and the CLI are the Debian packages a user installs
 * ({@code packaging/}, docs/quickstart.md), which the image installs with apt-get, so the cluster
 * tests the packages; the rest is laid out under {@code /opt/sluice}:
 *
 * <pre>
 * /usr/bin                 sluice-brokerd, sluice-kafka-tool, sluice-cli (the packages')
 * /opt/sluice/bin          sluice-node
 * /opt/sluice/lib/kafka    the Kafka broker's jars
 * /opt/sluice/lib/flink    the Flink session cluster's jars, with SQL and its gateway, and
 *                          Sluice's SQL connector jar
 * /opt/sluice/lib/sluice   the print head's and the checks' class path
 * /opt/sluice/jobs         job jars submitted through Flink's REST API
 * /opt/sluice/share/sluice configuration templates, Prometheus' configuration and dashboard, the
 *                          jobs' input image
 * </pre>
 */
final class ClusterImage {
    static final String TAG = "sluice:dev";

    private final Path root;

    /**
     * @param root the repository's root, whose modules were built
     */
    ClusterImage(Path root) {
        this.root = root;
    }

    /** Stages and builds {@value #TAG}, printing docker's progress to {@code out}. */
    void build(Consumer<String> out) throws IOException, InterruptedException {
        run(out, "bash", root.resolve("docker/base-image.sh").toString());
        Path context = stage();
        run(out, "docker", "build", "--tag", TAG, context.toString());
        // The image this build replaced, untagged now: each is as large as the image.
        run(
                out,
                "docker",
                "image",
                "prune",
                "--force",
                "--filter",
                "label=dev.sluice.image=cluster");
    }

    private Path stage() throws IOException {
        Path context = root.resolve("docker/target/image");
        deleteRecursively(context);
        Path opt = context.resolve("opt/sluice");
        Path packages = root.resolve("packaging/target");
        for (String name : List.of("sluice-brokerd_", "sluice-cli_")) {
            Path deb = single(packages, name, ".deb");
            copy(deb, context.resolve("debs").resolve(deb.getFileName()));
        }
        copy(root.resolve("docker/node/sluice-node"), opt.resolve("bin/sluice-node"));
        copyTree(root.resolve("docker/kafka-dist/target/lib"), opt.resolve("lib/kafka"));
        copyTree(root.resolve("docker/flink-dist/target/lib"), opt.resolve("lib/flink"));
        // Dropped into Flink's lib/, as a SQL user does (docs/flink-sql.md, "Installing").
        Path sqlConnector =
                single(
                        root.resolve("flink-sql-connector/target"),
                        "sluice-flink-sql-connector-",
                        ".jar");
        copy(sqlConnector, opt.resolve("lib/flink").resolve(sqlConnector.getFileName()));
        copyTree(root.resolve("docker/target/lib"), opt.resolve("lib/sluice"));
        copy(
                root.resolve("docker/target/sluice-cluster.jar"),
                opt.resolve("lib/sluice/sluice-cluster.jar"));
        copy(
                single(root.resolve("printing/target"), "sluice-printing-", "-job.jar"),
                Path.of(context.toString(), Topology.GENERATION_JOB_JAR));
        copy(
                root.resolve("examples/flink-job/target/sluice-example-job.jar"),
                Path.of(context.toString(), Topology.EXAMPLE_JOB_JAR));
        Path share = opt.resolve("share/sluice");
        copy(root.resolve("docker/conf/flink-config.yaml"), share.resolve("flink-config.yaml"));
        copy(
                root.resolve("docker/conf/log4j2-console.properties"),
                share.resolve("log4j2-console.properties"));
        copyTree(root.resolve("docker/conf/prometheus"), share.resolve("prometheus"));
        Files.move(
                TestChart.write(share),
                Path.of(context.toString(), Topology.TEST_CHART),
                StandardCopyOption.REPLACE_EXISTING);
        copy(root.resolve("docker/Dockerfile"), context.resolve("Dockerfile"));
        return context;
    }

    /** The one file of {@code dir} named {@code prefix...suffix}. */
    private static Path single(Path dir, String prefix, String suffix) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            List<Path> matches =
                    files.filter(
                                    f -> {
                                        String name = f.getFileName().toString();
                                        return name.startsWith(prefix) && name.endsWith(suffix);
                                    })
                            .toList();
            if (matches.size() != 1) {
                throw new IOException(
                        "expected one "
                                + prefix
                                + "*"
                                + suffix
                                + " in "
                                + dir
                                + ", found "
                                + matches
                                + ": build the project first (./sluice build)");
            }
            return matches.get(0);
        }
    }

    private static void copy(Path from, Path to) throws IOException {
        if (!Files.exists(from)) {
            throw new IOException(from + " is missing: build the project first (./sluice build)");
        }
        Files.createDirectories(to.getParent());
        Files.copy(
                from, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.COPY_ATTRIBUTES);
    }

    private static void copyTree(Path from, Path to) throws IOException {
        if (!Files.isDirectory(from)) {
            throw new IOException(from + " is missing: build the project first (./sluice build)");
        }
        try (Stream<Path> paths = Files.walk(from)) {
            for (Path path : (Iterable<Path>) paths::iterator) {
                Path target = to.resolve(from.relativize(path).toString());
                if (Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(
                            path,
                            target,
                            StandardCopyOption.REPLACE_EXISTING,
                            StandardCopyOption.COPY_ATTRIBUTES,
                            LinkOption.NOFOLLOW_LINKS);
                }
            }
        }
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }

    private static void run(Consumer<String> out, String... command)
            throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try (var lines = process.inputReader(StandardCharsets.UTF_8).lines()) {
            lines.forEach(out);
        }
        if (!process.waitFor(30, TimeUnit.MINUTES) || process.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed");
        }
    }
}
