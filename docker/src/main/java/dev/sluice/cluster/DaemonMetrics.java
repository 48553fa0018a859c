package dev.sluice.cluster;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What each host's {@code sluice-brokerd} fetched from which broker, and the chunks local producers
 * handed it, read from its Prometheus endpoint ({@code sluice_fetch_records_total}, {@code
 * sluice_local_chunks_total}, docs/brokerd.md): a daemon that reads only its own host's broker, the
 * partition's leader or, with rack awareness, its follower there, is what the source's placement is
 * for, and chunks handed over in shared memory are what the local way is for.
 */
final class DaemonMetrics {
    private static final Pattern FETCHED =
            Pattern.compile(
                    "^sluice_fetch_records_total\\{broker=\"([^\"]+)\"\\} (\\d+)",
                    Pattern.MULTILINE);
    private static final Pattern LOCAL_CHUNKS =
            Pattern.compile("^sluice_local_chunks_total(?:\\{[^}]*\\})? (\\d+)", Pattern.MULTILINE);
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private DaemonMetrics() {}

    /** Records fetched so far, by daemon host, then by broker address. */
    static Map<String, Map<String, Long>> fetchedByBroker()
            throws IOException, InterruptedException {
        Map<String, Map<String, Long>> fetched = new TreeMap<>();
        for (String host : Topology.BROKER_HOSTS.values()) {
            Map<String, Long> byBroker = new HashMap<>();
            Matcher m = FETCHED.matcher(scrape(host));
            while (m.find()) {
                byBroker.merge(m.group(1), Long.parseLong(m.group(2)), Long::sum);
            }
            fetched.put(host, byBroker);
        }
        return fetched;
    }

    /** Records fetched so far by every host's daemon together. */
    static long totalFetched() throws IOException, InterruptedException {
        return total(fetchedByBroker());
    }

    /** The sum of a {@link #fetchedByBroker()} reading. */
    private static long total(Map<String, Map<String, Long>> fetched) {
        return fetched.values().stream()
                .flatMap(byBroker -> byBroker.values().stream())
                .mapToLong(Long::longValue)
                .sum();
    }

    /**
     * Chunks local producers handed each host's daemon since it started, by daemon host (every
     * topic).
     */
    static Map<String, Long> localChunks() throws IOException, InterruptedException {
        Map<String, Long> chunks = new TreeMap<>();
        for (String host : Topology.BROKER_HOSTS.values()) {
            long sum = 0;
            Matcher m = LOCAL_CHUNKS.matcher(scrape(host));
            while (m.find()) {
                sum += Long.parseLong(m.group(1));
            }
            chunks.put(host, sum);
        }
        return chunks;
    }

    /** Whether {@code host}'s daemon serves its metrics: it runs. */
    static boolean answers(String host) {
        try {
            scrape(host);
            return true;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String scrape(String host) throws IOException, InterruptedException {
        HttpResponse<String> metrics =
                HTTP.send(
                        HttpRequest.newBuilder(URI.create(Topology.metricsUrl(host)))
                                .timeout(Duration.ofSeconds(10))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        if (metrics.statusCode() != 200) {
            throw new IOException(host + " metrics: HTTP " + metrics.statusCode());
        }
        return metrics.body();
    }
}
