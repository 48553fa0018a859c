package dev.sluice.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.client.job.BufferModel;
import dev.sluice.client.job.ChunkTopics;
import dev.sluice.client.job.JobClient;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobState;
import dev.sluice.client.job.JobStatus;
import dev.sluice.client.job.StreamSpec;
import dev.sluice.client.progress.DeliveryProgress;
import dev.sluice.client.progress.DeliveryProgressCodec;
import dev.sluice.printing.Channel;
import dev.sluice.printing.PrintJob;
import dev.sluice.printing.PrintingDemo;
import dev.sluice.printing.RasterImageProcessor;
import dev.sluice.printing.SequentialRip;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The checks of the demo cluster, run inside it by its client container ({@code sluice-node check
 * COMMAND}); each prints its figures and exits 0 only when everything it checks holds
 * (docs/cluster.md):
 *
 * <ul>
 *   <li>{@code setup}: the control, chunk and report topics, each chunk topic's leaders on its
 *       output location's host; the generation pipeline submitted as a job jar.
 *   <li>{@code printing}: print jobs through the jobs topic, their channels read at constant speed
 *       by the print heads of two hosts, each equal to a sequential run, none starved. {@code
 *       --submit-only} returns once the jobs' first bytes were delivered, for a fault to strike a
 *       running job; {@code --await ID,...} checks jobs submitted before. {@code --buffer
 *       producer-loss}: the readers start with the buffer that rides out a producer's loss.
 *   <li>{@code capacity}: what the cluster moves, from a job read faster than it generates, and the
 *       speed per channel that survives the loss of a host, at which its faults are checked: half
 *       of what the other hosts move. Its line {@code survivable-speed MB/s} is for the driver to
 *       read.
 *   <li>{@code source}: a {@code SluiceSource} PUSH count job submitted through Flink's REST API
 *       over a topic with leaders on every broker: the exact count, and every record fetched by the
 *       daemon from its own host's broker, the partition's leader or its follower in that rack.
 *       {@code --strike true}: as soon as a host's daemon fetches for the job, it prints {@code
 *       strike-taskmanager SERVICE}, the TaskManager of that host's reader, for the driver to kill
 *       and start again, and the count must still be exact, after at least one failover.
 *   <li>{@code sql}: Flink SQL through the SQL Gateway's REST API, as a SQL user runs it with
 *       Sluice's SQL connector jar in Flink's lib/: a table over a topic of JSON records in PUSH
 *       mode, and a grouped count and sum over it in batch mode, equal to what was produced.
 *   <li>{@code locality}: each chunk topic's leaders on its output location's host, and the share
 *       of the completed jobs' tasks computed on their output location's host.
 *   <li>{@code leaders}: the control topics led by their preferred leader again, on the host whose
 *       loss the host faults check, and with {@code --chunks-of} an output location's chunk topic
 *       led by another host than its reader's.
 * </ul>
 */
public final class ClusterChecks {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(10);
    private static final Duration SETUP_TIMEOUT = Duration.ofMinutes(5);
    private static final String GENERATION_JOB_NAME = "sluice generation";
    private static final int CHUNK_PARTITIONS = 4;
    private static final int SOURCE_PARTITIONS = 8;
    private static final List<String> CONTROL_TOPICS =
            List.of(
                    JobClient.DEFAULT_JOBS_TOPIC,
                    JobClient.DEFAULT_STATUS_TOPIC,
                    DeliveryProgress.DEFAULT_TOPIC,
                    Printed.TOPIC);
    // A container's name as Docker's DNS gives it for its address (sluice_host3_1.sluice_sluice)
    // holds its compose service: the host namespace a TaskManager shares.
    private static final Pattern HOST_NAME = Pattern.compile("host\\d+");
    private static final Pattern LOCAL_TASKS =
            Pattern.compile("(\\d+) of (\\d+) tasks computed on their output location's host");

    private final FlinkRest flink = new FlinkRest(URI.create(Topology.FLINK_REST));

    private ClusterChecks() {}

    public static void main(String[] args) throws Exception {
        String check = args.length == 0 ? "" : args[0];
        ClusterChecks checks = new ClusterChecks();
        boolean ok;
        try {
            Arguments options = Arguments.parse(Arrays.copyOfRange(args, 1, args.length));
            ok =
                    switch (check) {
                        case "setup" -> checks.setup();
                        case "printing" -> checks.printing(options);
                        case "capacity" -> checks.capacity(options);
                        case "source" ->
                                checks.source(
                                        (long) options.positive("--records", 2_000_000),
                                        options.flag("--strike"));
                        case "sql" -> checks.sql((long) options.positive("--records", 100_000));
                        case "locality" -> checks.locality();
                        case "leaders" -> checks.leaders(options);
                        case "producers" -> checks.producers();
                        default ->
                                throw new IllegalArgumentException(
                                        "usage: setup | printing [--jobs A,B/8] [--speed MB/s]"
                                                + " [--buffer task|producer-loss] [--prefix ID]"
                                                + " [--submit-only true] [--await ID,...]"
                                                + " [--allow-starvation true]"
                                                + " | capacity [--jobs B/4] [--speed MB/s]"
                                                + " | source [--records N] | locality"
                                                + " | leaders [--chunks-of LOCATION=HOST]"
                                                + " | producers");
                    };
        } catch (IllegalArgumentException e) {
            Arguments.exit("check " + check, e);
            return;
        }
        System.out.println(ok ? "PASSED " + check : "FAILED " + check);
        System.exit(ok ? 0 : 1);
    }

    // ---- setup ----

    private boolean setup() throws Exception {
        // The cluster's services start together and wait for what they need themselves
        // (docker-compose.yml): the topics need every broker, and the generation job a producer on
        // every host, beside the host's daemon.
        int hosts = Topology.BROKER_HOSTS.size();
        await("a TaskManager from every host", SETUP_TIMEOUT, () -> taskManagers() == hosts);
        await(
                "every host's daemon",
                SETUP_TIMEOUT,
                () -> Topology.BROKER_HOSTS.values().stream().allMatch(DaemonMetrics::answers));
        try (Admin admin = admin()) {
            await("every broker in the cluster", SETUP_TIMEOUT, () -> brokers(admin) == hosts);
            List<NewTopic> topics = new ArrayList<>();
            // Led by one host's broker, so that the host faults take their leader on purpose.
            for (String control : CONTROL_TOPICS) {
                topics.add(
                        new NewTopic(
                                control,
                                Map.of(
                                        0,
                                        replicasLedBy(Topology.brokerOf(Topology.CONTROL_HOST)))));
            }
            // A chunk crosses the network once: from its producer to the leader on its output
            // location's host, whose daemon reads it there.
            Topology.OUTPUT_LOCATION_HOSTS.forEach(
                    (location, host) ->
                            topics.add(
                                    new NewTopic(
                                            ChunkTopics.forOutputLocation(location),
                                            ledBy(List.of(Topology.brokerOf(host))))));
            create(admin, topics);
            awaitLeaders(admin, topics.stream().map(NewTopic::name).toList());
            System.out.printf(
                    "topics     %d created or present, every partition led%n", topics.size());
        }
        List<String> running = flink.jobs(GENERATION_JOB_NAME, "RUNNING");
        String jobId;
        if (running.isEmpty()) {
            long started = System.nanoTime();
            String jar = flink.upload(Path.of(Topology.GENERATION_JOB_JAR));
            List<String> args =
                    new ArrayList<>(
                            List.of(
                                    "--bootstrap-servers",
                                    Topology.BOOTSTRAP_SERVERS,
                                    // The print jobs' tasks are about 4 MiB.
                                    "--max-task-size",
                                    Integer.toString(8 << 20),
                                    // Each TaskManager's host daemon: a producer on a print
                                    // head's host hands it that head's chunks in shared memory.
                                    "--brokerd-socket",
                                    Topology.BROKERD_SOCKET));
            Topology.OUTPUT_LOCATION_HOSTS.forEach(
                    (location, host) ->
                            args.addAll(List.of("--output-location-host", location + "=" + host)));
            // One producer per host: each host computes, and each print head's host has one.
            jobId = flink.run(jar, "dev.sluice.printing.GenerationJob", args, 3);
            await("the generation job running", Duration.ofMinutes(3), () -> running(jobId));
            System.out.printf(
                    Locale.ROOT,
                    "generation job %s submitted as a jar through REST, running in %.1f s%n",
                    jobId,
                    (System.nanoTime() - started) / 1e9);
        } else {
            jobId = running.get(0);
            System.out.printf("generation job %s already running%n", jobId);
        }
        System.out.printf("producers on %s%n", flink.subtaskHosts(jobId));
        return true;
    }

    /** Partitions led by {@code leaders} in turn, each replicated on the other brokers. */
    private static Map<Integer, List<Integer>> ledBy(List<Integer> leaders) {
        int partitions = leaders.size() == 1 ? CHUNK_PARTITIONS : SOURCE_PARTITIONS;
        Map<Integer, List<Integer>> assignment = new TreeMap<>();
        for (int p = 0; p < partitions; p++) {
            assignment.put(p, replicasLedBy(leaders.get(p % leaders.size())));
        }
        return assignment;
    }

    /** Every broker, {@code leader} first: the partition's preferred leader. */
    private static List<Integer> replicasLedBy(int leader) {
        List<Integer> replicas = new ArrayList<>(List.of(leader));
        Topology.BROKER_HOSTS.keySet().stream()
                .sorted()
                .filter(id -> id != leader)
                .forEach(replicas::add);
        return replicas;
    }

    // ---- leaders ----

    /**
     * Puts the leaders where a host fault expects them: the control topics on {@link
     * Topology#CONTROL_HOST}'s broker, their preferred leader (an earlier fault of that host left
     * them led elsewhere, and Kafka's own rebalance would wait up to 5 minutes); and, with {@code
     * --chunks-of LOCATION=HOST}, the chunk topic of that output location led by HOST's broker, its
     * replicas reordered so that HOST's is preferred. A stream whose chunk topic is led by another
     * host than its reader's is read from the follower on the reader's host (docs/cluster.md, "Rack
     * awareness"); the host faults take that leader away.
     */
    private boolean leaders(Arguments options) throws Exception {
        Map<String, Integer> wanted = new TreeMap<>();
        for (String control : CONTROL_TOPICS) {
            wanted.put(control, Topology.brokerOf(Topology.CONTROL_HOST));
        }
        try (Admin admin = admin()) {
            String chunksOf = options.optional("--chunks-of", null);
            if (chunksOf != null) {
                String[] locationAndHost = chunksOf.split("=", 2);
                if (locationAndHost.length != 2
                        || !Topology.OUTPUT_LOCATION_HOSTS.containsKey(locationAndHost[0])) {
                    throw new IllegalArgumentException(
                            "--chunks-of takes LOCATION=HOST, LOCATION one of "
                                    + Topology.outputLocations());
                }
                String topic = ChunkTopics.forOutputLocation(locationAndHost[0]);
                int leader = Topology.brokerOf(locationAndHost[1]);
                Map<TopicPartition, Optional<NewPartitionReassignment>> reorder = new HashMap<>();
                for (TopicPartitionInfo p : partitions(admin, topic)) {
                    reorder.put(
                            new TopicPartition(topic, p.partition()),
                            Optional.of(new NewPartitionReassignment(replicasLedBy(leader))));
                }
                // The same replicas in another order: nothing to copy, done at once.
                admin.alterPartitionReassignments(reorder).all().get();
                wanted.put(topic, leader);
            }
            await(
                    "leaders " + wanted,
                    Duration.ofMinutes(2),
                    () -> {
                        try {
                            Map<TopicPartition, Integer> led = leadersOf(admin, wanted.keySet());
                            Set<TopicPartition> elsewhere = new HashSet<>();
                            led.forEach(
                                    (partition, leader) -> {
                                        if (leader != wanted.get(partition.topic())) {
                                            elsewhere.add(partition);
                                        }
                                    });
                            if (elsewhere.isEmpty()) {
                                return true;
                            }
                            // An election whose broker is not in sync yet fails that partition;
                            // the next round tries again.
                            admin.electLeaders(ElectionType.PREFERRED, elsewhere)
                                    .partitions()
                                    .get();
                            return false;
                        } catch (ExecutionException e) {
                            return false;
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                    });
            wanted.forEach(
                    (topic, leader) ->
                            System.out.printf(
                                    "leaders    %s led by broker %d on %s%n",
                                    topic, leader, Topology.BROKER_HOSTS.get(leader)));
        }
        return true;
    }

    /** Each partition's leader, -1 while it has none. */
    private static Map<TopicPartition, Integer> leadersOf(Admin admin, Set<String> topics)
            throws ExecutionException, InterruptedException {
        Map<TopicPartition, Integer> leaders = new HashMap<>();
        for (TopicDescription d : admin.describeTopics(topics).allTopicNames().get().values()) {
            for (TopicPartitionInfo p : d.partitions()) {
                Node leader = p.leader();
                leaders.put(
                        new TopicPartition(d.name(), p.partition()),
                        leader == null || leader.isEmpty() ? -1 : leader.id());
            }
        }
        return leaders;
    }

    private static void create(Admin admin, List<NewTopic> topics) throws Exception {
        for (NewTopic topic : topics) {
            try {
                admin.createTopics(List.of(topic)).all().get();
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
            }
        }
    }

    private static void awaitLeaders(Admin admin, List<String> topics) throws Exception {
        await(
                "leaders of " + topics,
                Duration.ofMinutes(1),
                () -> {
                    try {
                        for (TopicDescription d :
                                admin.describeTopics(topics).allTopicNames().get().values()) {
                            for (TopicPartitionInfo p : d.partitions()) {
                                if (p.leader() == null || p.leader().isEmpty()) {
                                    return false;
                                }
                            }
                        }
                        return true;
                    } catch (ExecutionException e) {
                        return false;
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
    }

    /** The TaskManagers registered with the JobManager, none while it does not answer. */
    private int taskManagers() {
        try {
            return flink.taskManagers();
        } catch (IOException e) {
            return 0;
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private boolean running(String jobId) {
        try {
            return flink.fullyRunning(jobId);
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    // ---- printing ----

    private boolean printing(Arguments options) throws Exception {
        List<PrintJob> jobs =
                Arrays.stream(options.optional("--jobs", "A,B/8").split(","))
                        .map(PrintJob::preset)
                        .toList();
        long speed = Math.round(options.positive("--speed", 1) * 1e6);
        boolean survivesProducerLoss =
                PrintingDemo.Options.survivesProducerLoss(options.optional("--buffer", "task"));
        String prefix =
                options.optional("--prefix", "print-" + System.currentTimeMillis() % 100_000);
        try (JobClient client =
                JobClient.builder().bootstrapServers(Topology.BOOTSTRAP_SERVERS).build()) {
            String awaited = options.optional("--await", null);
            // A fault may hold a stream up for longer than its readers' buffer: counted, allowed.
            boolean allowStarvation = options.flag("--allow-starvation");
            List<JobSpec> specs = new ArrayList<>();
            if (awaited == null) {
                for (PrintJob job : jobs) {
                    JobSpec spec =
                            spec(
                                    prefix + "." + job.name().replace('/', '-'),
                                    job,
                                    speed,
                                    survivesProducerLoss);
                    submit(client, spec, job);
                    specs.add(spec);
                }
                if (options.flag("--submit-only")) {
                    for (JobSpec spec : specs) {
                        JobStatus status =
                                client.awaitStatus(
                                        spec.id(),
                                        s -> s.state() != JobState.ACCEPTED,
                                        JOB_TIMEOUT);
                        if (status.state() != JobState.RUNNING) {
                            System.out.printf(
                                    "status     %s %s %s%n",
                                    spec.id(), status.state(), status.reason().orElse(""));
                            return false;
                        }
                        awaitDelivered(spec, 0.01);
                    }
                    System.out.println("running    " + String.join(",", ids(specs)));
                    return true;
                }
                return check(client, specs, jobs, allowStarvation);
            }
            for (String id : awaited.split(",")) {
                specs.add(spec(id, printJobOf(id), speed, survivesProducerLoss));
            }
            return check(
                    client,
                    specs,
                    specs.stream().map(s -> printJobOf(s.id())).toList(),
                    allowStarvation);
        }
    }

    private static List<String> ids(List<JobSpec> specs) {
        return specs.stream().map(JobSpec::id).toList();
    }

    /** A print job's spec; its id ends with the preset it prints ({@code print-1.B-8}). */
    private static JobSpec spec(String id, PrintJob job, long speed, boolean survivesProducerLoss) {
        return PrintingDemo.spec(
                        id,
                        job,
                        new File(Topology.TEST_CHART).toURI(),
                        Topology.outputLocations(),
                        speed)
                .withSurvivesProducerLoss(survivesProducerLoss);
    }

    private static void submit(JobClient client, JobSpec spec, PrintJob job) throws Exception {
        client.submit(spec);
        double speed = speedOf(spec);
        System.out.printf(
                Locale.ROOT,
                "submitted  %s: job %s, 4 channels of %.1f MB at %.2f MB/s each%n",
                spec.id(),
                job.name(),
                job.channelBytes() / 1e6,
                speed / 1e6);
        System.out.printf(
                "buffer     %s %s%n",
                spec.id(),
                BufferModel.explain(spec.taskSizeBytes(), speed, spec.survivesProducerLoss()));
    }

    /** The rate every channel of a print job is read at, in bytes per second. */
    private static double speedOf(JobSpec spec) {
        return spec.streams().get(0).rateBytesPerSecond().orElseThrow();
    }

    private static PrintJob printJobOf(String id) {
        return PrintJob.preset(id.substring(id.lastIndexOf('.') + 1).replace('-', '/'));
    }

    /** Waits until the readers of {@code spec} report {@code fraction} of its bytes delivered. */
    private static void awaitDelivered(JobSpec spec, double fraction) throws Exception {
        long total = spec.streams().stream().mapToLong(StreamSpec::sizeBytes).sum();
        Map<String, Long> delivered = new HashMap<>();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer()) {
            TopicPartition progress = new TopicPartition(DeliveryProgress.DEFAULT_TOPIC, 0);
            consumer.assign(List.of(progress));
            consumer.seekToBeginning(List.of(progress));
            long deadline = System.nanoTime() + JOB_TIMEOUT.toNanos();
            while (delivered.values().stream().mapToLong(Long::longValue).sum()
                    < fraction * total) {
                if (System.nanoTime() > deadline) {
                    throw new TimeoutException(spec.id() + ": not " + fraction + " delivered");
                }
                for (ConsumerRecord<byte[], byte[]> record :
                        consumer.poll(Duration.ofMillis(200))) {
                    DeliveryProgress p = DeliveryProgressCodec.decode(record.key(), record.value());
                    if (p.job().equals(spec.id())) {
                        delivered.merge(p.stream(), p.deliveredBytes(), Math::max);
                    }
                }
            }
        }
    }

    private boolean check(
            JobClient client, List<JobSpec> specs, List<PrintJob> jobs, boolean allowStarvation)
            throws Exception {
        boolean ok = true;
        Map<String, Printed> printed = new LinkedHashMap<>();
        for (JobSpec spec : specs) {
            JobStatus status =
                    client.awaitStatus(spec.id(), s -> s.state().isTerminal(), JOB_TIMEOUT);
            System.out.printf(
                    "status     %s %s%s%n",
                    spec.id(), status.state(), status.reason().map(r -> " (" + r + ")").orElse(""));
            ok &= status.state() == JobState.COMPLETED;
            printed.putAll(reports(spec));
            printTime(client, spec, status);
        }
        // Where the producers are now, and whether a fault made Flink restart them.
        for (String generation : flink.jobs(GENERATION_JOB_NAME, "RUNNING")) {
            System.out.printf(
                    "producers  on %s; the generation job failed and restarted %s times so"
                            + " far%n",
                    flink.subtaskHosts(generation).values(), flink.failures(generation));
        }
        System.out.printf(
                Locale.ROOT,
                "%-20s %-8s %-6s %9s %7s %8s %8s %8s  %s%n",
                "job",
                "stream",
                "host",
                "MB",
                "chunks",
                "MB/s",
                "starved",
                "p99 ms",
                "sha-256");
        for (int i = 0; i < specs.size(); i++) {
            JobSpec spec = specs.get(i);
            PrintJob job = jobs.get(i);
            Map<Channel, byte[]> reference =
                    SequentialRip.sha256(
                            new RasterImageProcessor(
                                    ImageIO.read(new File(Topology.TEST_CHART)),
                                    job.widthPx(),
                                    job.heightPx()));
            for (Channel channel : Channel.values()) {
                Printed report = printed.get(spec.id() + "/" + channel.streamName());
                String expected = SequentialRip.hex(reference.get(channel));
                String expectedHost =
                        Topology.OUTPUT_LOCATION_HOSTS.get(PrintingDemo.outputLocation(channel));
                boolean channelOk =
                        report != null
                                && report.error() == null
                                && report.bytes() == job.channelBytes()
                                && report.sha256().equals(expected)
                                && (allowStarvation || report.starvationEvents() == 0)
                                && report.host().equals(expectedHost);
                ok &= channelOk;
                if (report == null) {
                    System.out.printf("%-20s %-8s no report%n", spec.id(), channel.streamName());
                    continue;
                }
                System.out.printf(
                        Locale.ROOT,
                        "%-20s %-8s %-6s %9.1f %7d %8.2f %8d %8.1f  %s%n",
                        spec.id(),
                        channel.streamName(),
                        report.host(),
                        report.bytes() / 1e6,
                        report.chunks(),
                        report.bytesPerSecond() / 1e6,
                        report.starvationEvents(),
                        report.latenessP99Millis(),
                        report.error() != null
                                ? "ERROR " + report.error()
                                : report.sha256().equals(expected)
                                        ? report.sha256().substring(0, 16) + " = sequential"
                                        : report.sha256().substring(0, 16) + " DIFFERS");
            }
        }
        return ok;
    }

    /**
     * How long the job ran, from RUNNING to its end, against how long it takes when nothing goes
     * wrong: its readers' start delay, then a channel read at its speed.
     */
    private static void printTime(JobClient client, JobSpec spec, JobStatus end) {
        client.statuses(spec.id()).stream()
                .filter(s -> s.state() == JobState.RUNNING)
                .findFirst()
                .ifPresent(
                        running -> {
                            double speed = speedOf(spec);
                            long channel = spec.streams().get(0).sizeBytes();
                            double startDelay =
                                    BufferModel.startDelayNanos(
                                                    spec.taskSizeBytes(),
                                                    speed,
                                                    spec.survivesProducerLoss())
                                            / 1e9;
                            System.out.printf(
                                    Locale.ROOT,
                                    "time       %s ran %.1f s; fault-free %.1f s (start delay %.1f"
                                            + " s, then %.1f MB at %.2f MB/s)%n",
                                    spec.id(),
                                    (end.timestampMs() - running.timestampMs()) / 1e3,
                                    startDelay + channel / speed,
                                    startDelay,
                                    channel / 1e6,
                                    speed / 1e6);
                        });
    }

    // ---- capacity ----

    /**
     * What the cluster moves: a job whose channels are read faster than the cluster generates them,
     * checked complete and equal to the sequential run, starvation allowed; the sum of the rates
     * its channels achieved. The speed its faults are checked at follows: with one host of three
     * fewer, the others move two thirds of it, and half of that leaves the headroom a fault needs
     * (docs/cluster.md, "Checks").
     */
    private boolean capacity(Arguments options) throws Exception {
        PrintJob job = PrintJob.preset(options.optional("--jobs", "B/4"));
        long speed = Math.round(options.positive("--speed", 4) * 1e6);
        JobSpec spec =
                spec(
                        "capacity-"
                                + System.currentTimeMillis() % 100_000
                                + "."
                                + job.name().replace('/', '-'),
                        job,
                        speed,
                        false);
        boolean ok;
        try (JobClient client =
                JobClient.builder().bootstrapServers(Topology.BOOTSTRAP_SERVERS).build()) {
            submit(client, spec, job);
            ok = check(client, List.of(spec), List.of(job), true);
        }
        double moved = reports(spec).values().stream().mapToDouble(Printed::bytesPerSecond).sum();
        int hosts = Topology.BROKER_HOSTS.size();
        int channels = spec.streams().size();
        double survivable = moved * (hosts - 1) / hosts / 2 / channels;
        System.out.printf(
                Locale.ROOT,
                "capacity   %.1f MB/s moved across %d channels; with one host of %d fewer, half"
                        + " of it: %.2f MB/s per channel%n",
                moved / 1e6,
                channels,
                hosts,
                survivable / 1e6);
        System.out.printf(Locale.ROOT, "survivable-speed %.3f%n", survivable / 1e6);
        return ok && survivable > 0;
    }

    /** The print heads' reports of the job's four channels. */
    private static Map<String, Printed> reports(JobSpec spec) throws Exception {
        Map<String, Printed> reports = new HashMap<>();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer()) {
            TopicPartition topic = new TopicPartition(Printed.TOPIC, 0);
            consumer.assign(List.of(topic));
            consumer.seekToBeginning(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
            while (reports.size() < spec.streams().size() && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> record :
                        consumer.poll(Duration.ofMillis(200))) {
                    Printed printed = Printed.fromJson(record.value());
                    if (printed.job().equals(spec.id())) {
                        reports.put(printed.job() + "/" + printed.stream(), printed);
                    }
                }
            }
        }
        return reports;
    }

    // ---- source ----

    private boolean source(long records, boolean strike) throws Exception {
        String topic = "sluice-check-records-" + System.currentTimeMillis();
        Map<Integer, Long> produced = new TreeMap<>();
        Map<Integer, Integer> leaders = new TreeMap<>();
        try (Admin admin = admin()) {
            create(admin, List.of(new NewTopic(topic, ledBy(List.of(1, 2, 3)))));
            awaitLeaders(admin, List.of(topic));
            long started = System.nanoTime();
            produce(topic, records, produced);
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            for (int p = 0; p < SOURCE_PARTITIONS; p++) {
                latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
            }
            long logged = 0;
            for (var offsets : admin.listOffsets(latest).all().get().entrySet()) {
                long end = offsets.getValue().offset();
                logged += end;
                if (end != produced.get(offsets.getKey().partition())) {
                    System.out.printf(
                            "partition %d: %d acknowledged, %d in the log%n",
                            offsets.getKey().partition(),
                            produced.get(offsets.getKey().partition()),
                            end);
                    return false;
                }
            }
            for (TopicPartitionInfo p : partitions(admin, topic)) {
                leaders.put(p.partition(), p.leader().id());
            }
            System.out.printf(
                    Locale.ROOT,
                    "produced   %d records of 100 B to %s (%d partitions, leaders %s) in %.1f s;"
                            + " %d in the logs%n",
                    records,
                    topic,
                    SOURCE_PARTITIONS,
                    leaders.values(),
                    (System.nanoTime() - started) / 1e9,
                    logged);
        }

        Map<String, Map<String, Long>> before = DaemonMetrics.fetchedByBroker();
        long started = System.nanoTime();
        String jar = flink.upload(Path.of(Topology.EXAMPLE_JOB_JAR));
        String jobId =
                flink.run(
                        jar,
                        "dev.sluice.examples.job.CountJob",
                        List.of(
                                "--bootstrap-servers",
                                Topology.BOOTSTRAP_SERVERS,
                                "--topic",
                                topic,
                                "--mode",
                                "PUSH"),
                        3);
        String struck = null;
        if (strike) {
            // The strike, as soon as a daemon fetches for the job: only a reader on its host can
            // have asked it (a reader subscribes to the daemon beside it, docs/brokerd.md), so
            // that reader runs, with most of its records to go. Not from Flink's REST API, which
            // serves job details up to web.refresh-interval (3 s) old: a reader of 2,000,000
            // records ended before the API showed it RUNNING three runs in five.
            String host = awaitFirstFetch(before);
            System.out.println("strike-taskmanager " + Topology.taskManagerOf(host));
            System.out.flush();
            struck = Topology.taskManagerOf(host) + " as its host's daemon began to fetch";
        }
        List<String> readers = new ArrayList<>();
        await(
                "the count job finished",
                JOB_TIMEOUT,
                () -> {
                    try {
                        if (readers.isEmpty() && "RUNNING".equals(flink.state(jobId))) {
                            // One chained vertex: its subtasks are the readers.
                            List<String> hosts =
                                    flink.subtaskHosts(jobId).values().stream()
                                            .flatMap(List::stream)
                                            .toList();
                            if (hosts.stream().noneMatch(h -> h.startsWith("("))) {
                                readers.addAll(hosts);
                            }
                        }
                        String state = flink.state(jobId);
                        if (state.equals("FAILED") || state.equals("CANCELED")) {
                            throw new IllegalStateException("the count job " + state);
                        }
                        return state.equals("FINISHED");
                    } catch (IOException e) {
                        return false;
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
        double seconds = (System.nanoTime() - started) / 1e9;
        Map<String, String> accumulators = flink.accumulators(jobId);
        Map<String, Map<String, Long>> after = DaemonMetrics.fetchedByBroker();

        boolean ok = true;
        if (strike) {
            // The strike must have cost the job a restart, or it proves nothing about one.
            FlinkRest.Failures failures = flink.failures(jobId);
            System.out.printf("failovers  %s of the count job, struck %s%n", failures, struck);
            ok = failures.count() >= 1;
        }
        long counted = Long.parseLong(accumulators.getOrDefault("records", "-1"));
        System.out.printf(
                Locale.ROOT,
                "count job  %s submitted as a jar through REST, PUSH, parallelism 3, readers on %s:"
                        + " %d records counted in %.1f s (produced %d)%n",
                jobId,
                readers,
                counted,
                seconds,
                records);
        ok &= counted == records;
        for (var partition : produced.entrySet()) {
            long count =
                    Long.parseLong(
                            accumulators.getOrDefault(
                                    "records-partition-" + partition.getKey(), "-1"));
            if (count != partition.getValue()) {
                System.out.printf(
                        "partition %d: counted %d, produced %d%n",
                        partition.getKey(), count, partition.getValue());
                ok = false;
            }
        }
        long local = 0;
        long remote = 0;
        for (String daemonHost : Topology.BROKER_HOSTS.values()) {
            Map<String, Long> was = before.getOrDefault(daemonHost, Map.of());
            for (var broker : after.getOrDefault(daemonHost, Map.of()).entrySet()) {
                long fetched = broker.getValue() - was.getOrDefault(broker.getKey(), 0L);
                if (fetched == 0) {
                    continue;
                }
                boolean isLocal = broker.getKey().startsWith(daemonHost + ":");
                System.out.printf(
                        "daemon     %s fetched %d records from the broker at %s (%s)%n",
                        daemonHost, fetched, broker.getKey(), isLocal ? "its host" : "REMOTE");
                if (isLocal) {
                    local += fetched;
                } else {
                    remote += fetched;
                }
            }
        }
        double fraction = local + remote == 0 ? 0 : (double) local / (local + remote);
        System.out.printf(
                Locale.ROOT,
                "locality   %.3f of the records fetched were fetched by the daemon on the host of"
                        + " the broker they came from, leader or follower (%d of %d)%n",
                fraction,
                local,
                local + remote);
        ok &= remote == 0 && local >= records;
        return ok;
    }

    /**
     * A grouped count and sum through the SQL Gateway ({@link SqlGatewayRest}) over {@code records}
     * JSON records {@code {"word": "w<i % 5>", "n": i}}: one row per word, its count and the sum of
     * its {@code n}, exactly as produced. The table reads through the daemons (PUSH), from the
     * earliest offsets to the latest at the start, so the query is bounded and runs in batch mode.
     */
    private boolean sql(long records) throws Exception {
        String topic = "sluice-check-sql-" + System.currentTimeMillis();
        Map<String, long[]> expected = new TreeMap<>();
        try (Admin admin = admin()) {
            create(admin, List.of(new NewTopic(topic, ledBy(List.of(1, 2, 3)))));
            awaitLeaders(admin, List.of(topic));
        }
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            for (long i = 0; i < records; i++) {
                String word = "w" + i % 5;
                long[] countAndSum = expected.computeIfAbsent(word, w -> new long[2]);
                countAndSum[0]++;
                countAndSum[1] += i;
                byte[] value =
                        ("{\"word\": \"" + word + "\", \"n\": " + i + "}")
                                .getBytes(StandardCharsets.UTF_8);
                producer.send(new ProducerRecord<>(topic, value));
            }
            producer.flush();
        }

        SqlGatewayRest gateway = new SqlGatewayRest(URI.create(Topology.SQL_GATEWAY));
        long fetchedBefore = DaemonMetrics.totalFetched();
        long started = System.nanoTime();
        String session = gateway.openSession(Map.of("execution.runtime-mode", "batch"));
        gateway.execute(
                session,
                "CREATE TABLE words (word STRING, n BIGINT) WITH ('connector' = 'sluice',"
                        + " 'topic' = '"
                        + topic
                        + "', 'format' = 'json', 'properties.bootstrap.servers' = '"
                        + Topology.BOOTSTRAP_SERVERS
                        + "', 'sluice.mode' = 'PUSH', 'scan.startup.mode' = 'earliest-offset',"
                        + " 'scan.bounded.mode' = 'latest-offset')",
                JOB_TIMEOUT);
        List<List<JsonNode>> rows =
                gateway.execute(
                        session,
                        "SELECT word, COUNT(*) AS c, SUM(n) AS s FROM words GROUP BY word",
                        JOB_TIMEOUT);
        double seconds = (System.nanoTime() - started) / 1e9;
        long fetched = DaemonMetrics.totalFetched() - fetchedBefore;
        Map<String, long[]> got = new TreeMap<>();
        for (List<JsonNode> row : rows) {
            got.put(row.get(0).asText(), new long[] {row.get(1).asLong(), row.get(2).asLong()});
        }
        boolean ok = got.keySet().equals(expected.keySet());
        for (var word : expected.entrySet()) {
            long[] actual = got.getOrDefault(word.getKey(), new long[] {-1, -1});
            System.out.printf(
                    "sql row    %s count %d sum %d (produced %d, %d)%n",
                    word.getKey(), actual[0], actual[1], word.getValue()[0], word.getValue()[1]);
            ok &= Arrays.equals(actual, word.getValue());
        }
        System.out.printf(
                Locale.ROOT,
                "sql        %d rows through the SQL Gateway's REST API, DDL and a grouped query"
                        + " over %d JSON records, PUSH, batch mode, in %.1f s; the daemons fetched"
                        + " %d records meanwhile%n",
                rows.size(),
                records,
                seconds,
                fetched);
        // PUSH: the table's records came through the daemons (besides what else they fetched).
        return ok && rows.size() == expected.size() && fetched >= records;
    }

    /**
     * The host of the first daemon whose count of fetched records rose above {@code before}'s,
     * polled every 50 ms: a scrape of the three daemons takes a few milliseconds.
     */
    private static String awaitFirstFetch(Map<String, Map<String, Long>> before)
            throws TimeoutException, InterruptedException {
        String[] first = {null};
        await(
                "a daemon fetching for the count job",
                JOB_TIMEOUT,
                Duration.ofMillis(50),
                () -> {
                    try {
                        for (var host : DaemonMetrics.fetchedByBroker().entrySet()) {
                            Map<String, Long> was = before.getOrDefault(host.getKey(), Map.of());
                            if (!host.getValue().equals(was)) {
                                first[0] = host.getKey();
                                return true;
                            }
                        }
                        return false;
                    } catch (IOException e) {
                        return false;
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
        return first[0];
    }

    private static void produce(String topic, long records, Map<Integer, Long> acknowledged)
            throws Exception {
        byte[] value = new byte[100];
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            List<java.util.concurrent.Future<?>> pending = new ArrayList<>();
            for (long i = 0; i < records; i++) {
                int partition = (int) (i % SOURCE_PARTITIONS);
                value[0] = (byte) i;
                pending.add(
                        producer.send(
                                new ProducerRecord<>(topic, partition, null, value.clone()),
                                (metadata, error) -> {
                                    if (error == null) {
                                        synchronized (acknowledged) {
                                            acknowledged.merge(metadata.partition(), 1L, Long::sum);
                                        }
                                    }
                                }));
                if (pending.size() >= 100_000) {
                    producer.flush();
                    pending.clear();
                }
            }
            producer.flush();
        }
        long total = acknowledged.values().stream().mapToLong(Long::longValue).sum();
        if (total != records) {
            throw new IllegalStateException(total + " of " + records + " records acknowledged");
        }
    }

    // ---- locality ----

    /**
     * Prints {@code producer-hosts} and the host of each producer of the running generation job,
     * for the faults that strike a producer's TaskManager: Flink restores a lost producer elsewhere
     * and never moves it back (docs/generation.md, "Producers' hosts after a failover"), so a
     * TaskManager that had one may have none by then.
     */
    private boolean producers() throws Exception {
        List<String> hosts = new ArrayList<>();
        for (String generation : flink.jobs(GENERATION_JOB_NAME, "RUNNING")) {
            for (List<String> subtasks : flink.subtaskHosts(generation).values()) {
                for (String name : subtasks) {
                    Matcher host = HOST_NAME.matcher(name);
                    if (!host.find()) {
                        throw new IllegalStateException(
                                "a producer on " + name + ", no host of the cluster's");
                    }
                    hosts.add(host.group());
                }
            }
        }
        System.out.println("producer-hosts " + String.join(" ", hosts));
        return !hosts.isEmpty();
    }

    private boolean locality() throws Exception {
        int partitions = 0;
        int local = 0;
        try (Admin admin = admin()) {
            for (var location : Topology.OUTPUT_LOCATION_HOSTS.entrySet()) {
                String topic = ChunkTopics.forOutputLocation(location.getKey());
                int wanted = Topology.brokerOf(location.getValue());
                for (TopicPartitionInfo p : partitions(admin, topic)) {
                    partitions++;
                    if (p.leader() != null && p.leader().id() == wanted) {
                        local++;
                    }
                }
            }
        }
        System.out.printf(
                Locale.ROOT,
                "leaders    %d of %d chunk-topic partitions led by the broker on their output"
                        + " location's host (%.2f)%n",
                local,
                partitions,
                (double) local / partitions);
        // The scheduler's COMPLETED statuses say where the jobs' tasks were computed.
        int tasks = 0;
        int localTasks = 0;
        try (JobClient client =
                JobClient.builder().bootstrapServers(Topology.BOOTSTRAP_SERVERS).build()) {
            for (JobStatus status : client.statuses()) {
                Matcher m = LOCAL_TASKS.matcher(status.reason().orElse(""));
                if (status.state() == JobState.COMPLETED && m.find()) {
                    localTasks += Integer.parseInt(m.group(1));
                    tasks += Integer.parseInt(m.group(2));
                }
            }
        }
        // Host-blind placement would compute a task on its stream's host a third of the time
        // here (host3 prints nothing; host1 and host2 each print half the streams).
        double share = tasks == 0 ? 0 : (double) localTasks / tasks;
        System.out.printf(
                Locale.ROOT,
                "producers %d of %d tasks of the completed jobs computed on their output"
                        + " location's host (%.2f)%n",
                localTasks,
                tasks,
                share);
        // Tasks computed on a print head's host went the local way: its daemon took their chunks
        // from the TaskManager's segment, not from Kafka (docs/generation.md, "Transports").
        Map<String, Long> handedOver = DaemonMetrics.localChunks();
        System.out.printf(
                "transport  chunks handed to each host's daemon in shared memory: %s%n",
                handedOver);
        boolean everyPrintHostLocal =
                Set.copyOf(Topology.OUTPUT_LOCATION_HOSTS.values()).stream()
                        .allMatch(host -> handedOver.getOrDefault(host, 0L) > 0);
        return local == partitions && share > 1.0 / 3 && everyPrintHostLocal;
    }

    // ---- helpers ----

    private static Admin admin() {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, Topology.BOOTSTRAP_SERVERS);
        return Admin.create(props);
    }

    /** The brokers the cluster has now, none while no broker answers. */
    private static int brokers(Admin admin) {
        try {
            return admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).size();
        } catch (ExecutionException | TimeoutException e) {
            return 0;
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<TopicPartitionInfo> partitions(Admin admin, String topic)
            throws ExecutionException, InterruptedException {
        return admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions();
    }

    /** The checks' producer of test records: every record acknowledged by the in-sync replicas. */
    private static KafkaProducer<byte[], byte[]> producer() {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, Topology.BOOTSTRAP_SERVERS);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        props.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 << 10);
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private static KafkaConsumer<byte[], byte[]> consumer() {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, Topology.BOOTSTRAP_SERVERS);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    private static void await(String what, Duration timeout, BooleanSupplier condition)
            throws TimeoutException, InterruptedException {
        await(what, timeout, Duration.ofMillis(250), condition);
    }

    private static void await(
            String what, Duration timeout, Duration poll, BooleanSupplier condition)
            throws TimeoutException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new TimeoutException("waited " + timeout + " for " + what);
            }
            Thread.sleep(poll.toMillis());
        }
    }
}
