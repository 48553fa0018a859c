package dev.sluice.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The cluster's dashboard as an operator's browser shows it (docs/cluster.md, "Watching the
 * cluster"): a Prometheus console template, rendered by headless Chromium while a paced job prints.
 * The page's DOM, once its script drew the charts, must show each printing stream with a delivered
 * rate and every chart with samples; the screenshot is kept for a person to look at.
 */
final class Dashboard {
    static final String PAGE = "/consoles/sluice.html";
    // Debian's chromium-headless-shell, installed by ./sluice cluster and ./sluice test.
    private static final String CHROMIUM = "chromium-headless-shell";
    // Streams delivering now, not at their end, that Prometheus has scraped for 20 s: their
    // charts have points.
    private static final String PRINTING =
            "(rate(sluice_reader_bytes_total[10s]) > 0)"
                    + " and on (sluice_job, stream) (sluice_reader_end_of_stream == 0)"
                    + " and on (sluice_job, stream)"
                    + " (count_over_time(sluice_reader_bytes_total[30s]) >= 10)";
    // Samples a chart of a printing stream must have: 10 s of it at the 2 s scrape interval.
    private static final int MIN_POINTS = 5;
    private static final Pattern ROW =
            Pattern.compile(
                    "<tr class=\"stream\" data-job=\"([^\"]+)\" data-stream=\"([^\"]+)\">(.*?)"
                            + "<tr class=\"charts\">(.*?)</tr>",
                    Pattern.DOTALL);
    private static final Pattern DELIVERED =
            Pattern.compile("<td class=\"num delivered\">([0-9.]+)</td>");
    private static final Pattern POINTS = Pattern.compile("data-points=\"(\\d+)\"");
    private static final Pattern STATE = Pattern.compile("<td>(printing|done)</td>");

    private final URI prometheus;
    private final JsonHttp http = new JsonHttp();

    /**
     * @param prometheus Prometheus' address on this machine, {@code http://127.0.0.1:PORT}
     */
    Dashboard(URI prometheus) {
        this.prometheus = prometheus;
    }

    /**
     * What a look at the page found: the streams printing when it was taken, how many of them the
     * page showed printing, and what it showed wrong (empty: nothing).
     */
    record Seen(Set<String> printing, int shownPrinting, List<String> wrong) {}

    URI page() {
        return prometheus.resolve(PAGE);
    }

    /**
     * Waits until a stream has been printing for a while, then renders the page: the screenshot
     * goes to {@code png}. What is wrong: a stream printing then that is missing from the table or
     * has a chart of fewer than {@value #MIN_POINTS} samples, one the page shows printing without a
     * delivered rate, or none shown printing (a stream may end between the query and the page).
     */
    Seen check(Path png, Duration timeout) throws Exception {
        Set<String> printing = awaitPrinting(timeout);
        String dom = chromium("--dump-dom");
        Files.deleteIfExists(png);
        chromium("--screenshot=" + png, "--window-size=1500,1300");
        if (!Files.exists(png)) {
            return new Seen(printing, 0, List.of("Chromium left no screenshot at " + png));
        }
        List<String> wrong = new ArrayList<>();
        Set<String> shown = new TreeSet<>();
        int shownPrinting = 0;
        Matcher row = ROW.matcher(dom);
        while (row.find()) {
            String stream = row.group(1) + "/" + row.group(2);
            if (!printing.contains(stream)) {
                continue;
            }
            shown.add(stream);
            Matcher state = STATE.matcher(row.group(3));
            if (state.find() && state.group(1).equals("printing")) {
                shownPrinting++;
                Matcher delivered = DELIVERED.matcher(row.group(3));
                if (!delivered.find() || !(Double.parseDouble(delivered.group(1)) > 0)) {
                    wrong.add(stream + ": printing, no delivered rate");
                }
            }
            Matcher points = POINTS.matcher(row.group(4));
            int charts = 0;
            while (points.find()) {
                charts++;
                if (Integer.parseInt(points.group(1)) < MIN_POINTS) {
                    wrong.add(stream + ": a chart of " + points.group(1) + " samples");
                }
            }
            if (charts != 4) {
                wrong.add(stream + ": " + charts + " charts drawn of 4");
            }
        }
        for (String stream : printing) {
            if (!shown.contains(stream)) {
                wrong.add(stream + ": not in the table");
            }
        }
        if (shownPrinting == 0) {
            wrong.add("no stream shown printing, of " + printing);
        }
        return new Seen(printing, shownPrinting, wrong);
    }

    /** The streams printing, as {@code job/stream}, once there are some and no more come. */
    private Set<String> awaitPrinting(Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        Set<String> before = Set.of();
        while (true) {
            Set<String> streams = new TreeSet<>();
            JsonNode answer =
                    http.send(
                            HttpRequest.newBuilder(
                                    prometheus.resolve(
                                            "/api/v1/query?query="
                                                    + URLEncoder.encode(
                                                            PRINTING, StandardCharsets.UTF_8))));
            for (JsonNode series : answer.path("data").path("result")) {
                JsonNode labels = series.path("metric");
                streams.add(
                        labels.path("sluice_job").asText() + "/" + labels.path("stream").asText());
            }
            // The same streams a scrape apart: the job's other streams, which began a moment
            // later, have come too.
            if (!streams.isEmpty() && streams.equals(before)) {
                return streams;
            }
            if (System.nanoTime() > deadline) {
                throw new TimeoutException("no stream printing on the dashboard after " + timeout);
            }
            before = streams;
            TimeUnit.SECONDS.sleep(2);
        }
    }

    /**
     * Runs headless Chromium on the page with {@code flags}; returns what it printed. Without its
     * sandbox: the tests run as root, which the sandbox refuses, and the page is the cluster's own
     * on this machine's loopback. The virtual time budget lets the charts' script fetch and draw
     * before the page is taken.
     */
    private String chromium(String... flags) throws IOException, InterruptedException {
        List<String> command =
                new ArrayList<>(List.of(CHROMIUM, "--no-sandbox", "--virtual-time-budget=15000"));
        command.addAll(List.of(flags));
        command.add(page().toString());
        Process process;
        try {
            process =
                    new ProcessBuilder(command)
                            .redirectError(ProcessBuilder.Redirect.DISCARD)
                            .start();
        } catch (IOException e) {
            throw new IOException(CHROMIUM + " is missing: ./sluice cluster installs it", e);
        }
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(1, TimeUnit.MINUTES) || process.exitValue() != 0) {
            process.destroyForcibly();
            throw new IOException(String.join(" ", command) + " failed");
        }
        return out;
    }
}
