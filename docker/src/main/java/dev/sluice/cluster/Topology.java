package dev.sluice.cluster;

import dev.sluice.printing.Channel;
import dev.sluice.printing.PrintingDemo;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The demo cluster's layout, as docker-compose.yml lays it out: which broker is on which host, and
 * which host each print head (output location) is on. The checks place topics by it and compare
 * what they measure with it.
 */
final class Topology {
    /** Hosts by their Kafka broker's node id. */
    static final Map<Integer, String> BROKER_HOSTS = Map.of(1, "host1", 2, "host2", 3, "host3");

    /** The print heads' output locations, in channel order, with their hosts. */
    static final Map<String, String> OUTPUT_LOCATION_HOSTS = outputLocationHosts();

    static final String BOOTSTRAP_SERVERS = "host1:9092,host2:9092,host3:9092";

    /**
     * The host whose broker leads the control topics (jobs, statuses, delivery progress, the print
     * heads' reports): host3, which prints nothing, so that its loss takes the control topics'
     * leader and a producer but no reader.
     */
    static final String CONTROL_HOST = "host3";

    /**
     * The output location whose chunk topic the host faults have led by {@link #CONTROL_HOST}: its
     * stream is then read on its print head's host from the follower there, and the fault takes its
     * leader away.
     */
    static final String READ_ELSEWHERE = PrintingDemo.outputLocation(Channel.MAGENTA);

    /**
     * The services of {@code host}, as docker-compose.yml names them: the host's namespace first,
     * then its broker, daemon and TaskManager, and its print head where it has one.
     */
    static List<String> servicesOf(String host) {
        String n = host.substring("host".length());
        List<String> services =
                new ArrayList<>(List.of(host, "kafka-" + n, "brokerd-" + n, taskManagerOf(host)));
        if (OUTPUT_LOCATION_HOSTS.containsValue(host)) {
            services.add("printhead-" + n);
        }
        return List.copyOf(services);
    }

    /** The TaskManager service of {@code host}. */
    static String taskManagerOf(String host) {
        return "taskmanager-" + host.substring("host".length());
    }

    /** Where each daemon serves its Prometheus metrics. */
    static String metricsUrl(String host) {
        return "http://" + host + ":9464/metrics";
    }

    /** The Flink JobManager's REST API. */
    static final String FLINK_REST = "http://jobmanager:8081";

    /** Flink's SQL Gateway, on the cluster's network (docs/cluster.md, "Flink SQL"). */
    static final String SQL_GATEWAY = "http://sqlgateway:8083";

    /** The jobs' input image, in the image at the same path on every host. */
    static final String TEST_CHART = "/opt/sluice/share/sluice/test-chart.png";

    /**
     * Each host's daemon socket, where its TaskManager and print head find it: the host's socket
     * folder is a volume of theirs (docker-compose.yml).
     */
    static final String BROKERD_SOCKET = "/run/sluice/brokerd.sock";

    /** The job jars in the image. */
    static final String GENERATION_JOB_JAR = "/opt/sluice/jobs/sluice-generation-job.jar";

    static final String EXAMPLE_JOB_JAR = "/opt/sluice/jobs/sluice-example-job.jar";

    private Topology() {}

    static int brokerOf(String host) {
        return BROKER_HOSTS.entrySet().stream()
                .filter(e -> e.getValue().equals(host))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no broker on " + host))
                .getKey();
    }

    static List<String> outputLocations() {
        return List.copyOf(OUTPUT_LOCATION_HOSTS.keySet());
    }

    // Cyan and magenta print on host1, yellow and black on host2; host3 only computes.
    private static Map<String, String> outputLocationHosts() {
        Map<String, String> hosts = new LinkedHashMap<>();
        for (Channel channel : Channel.values()) {
            hosts.put(
                    PrintingDemo.outputLocation(channel),
                    channel.ordinal() < 2 ? "host1" : "host2");
        }
        return java.util.Collections.unmodifiableMap(hosts);
    }
}
