package dev.sluice.flink.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import com.google.flatbuffers.FlatBufferBuilder;
import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.job.ChunkTopics;
import dev.sluice.client.job.GeneratorSpec;
import dev.sluice.client.job.JobClient;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobState;
import dev.sluice.client.job.SplitRule;
import dev.sluice.client.job.StreamSpec;
import dev.sluice.client.read.StreamChunk;
import dev.sluice.client.read.StreamReader;
import dev.sluice.client.thread.SluiceThreads;
import dev.sluice.embedded.junit.Await;
import dev.sluice.embedded.junit.BrokerdExtension;
import dev.sluice.embedded.junit.KafkaBrokerExtension;
import dev.sluice.flink.generation.GenerationSource;
import dev.sluice.flink.lifecycle.userjar.CountingGenerator;
import dev.sluice.flink.lifecycle.userjar.CountingSchema;
import dev.sluice.flink.lifecycle.userjar.RecordingPolicy;
import dev.sluice.flink.sink.SluiceSink;
import dev.sluice.flink.source.ReadMode;
import dev.sluice.flink.source.SluiceSource;
import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.runtime.ObjectMethods;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ValueVector;
import org.apache.commons.codec.binary.Hex;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.runtime.clusterframework.ApplicationStatus;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every thread Sluice starts ends with what owns it (docs/architecture.md, "Threads"), so a
 * TaskManager that runs job after job keeps neither Sluice's threads nor the jobs' classes.
 *
 * <p>On one TaskManager JVM (a MiniCluster: the JobManager shares it), a SluiceSource PUSH job and
 * a GenerationSource → SluiceSink job, read by a StreamReader, run from a jar built here, as jobs
 * of a session cluster do: Flink loads Sluice and its dependencies child-first from the jar with
 * each job's user-code class loader. The registry of shared subscriptions, a static field of the
 * client's {@code SharedSubscription} that holds the shared records subscriptions and the stream
 * readers' chunk subscriptions alike, is therefore one per job on the TaskManager: the push job's
 * shared subscription is in the push job's registry, and the subscription of the test's
 * StreamReader, whose classes the test's own loader loaded, in the test's. Each subscription's
 * thread ends, and its entry leaves its registry, with its last reader. Both jobs are cancelled
 * mid-flight (the source's operator holding batches of the shared records subscription, the sink's
 * writer held at its cap by a reader that stopped reading); then no {@code sluice-*} thread is
 * left, and every user-code class loader of the two jobs, on the JobManager's side and the
 * TaskManager's, can be collected, once the test has moved JDK 17's caches of record methods off
 * the jobs' classes (they hold one loader, whoever's: see {@link
 * #moveRecordMethodCachesOffTheJobs()}).
 */
class NoThreadOutlivesItsJobIT {
    @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();
    @RegisterExtension static final BrokerdExtension BROKERD = new BrokerdExtension(KAFKA);

    @RegisterExtension
    static final MiniClusterExtension FLINK =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final long HOLD_AFTER_RECORDS = 1_000;

    @TempDir static Path dir;

    @Test
    void cancelledJobsLeaveNoSluiceThreadAndTheirClassLoadersCanBeCollected(
            @InjectMiniCluster MiniCluster cluster) throws Throwable {
        // Threads of other test classes of this JVM are theirs to account for.
        Set<Thread> before = Thread.getAllStackTraces().keySet();
        List<Path> jars = userJars();
        UserCodeLoaders.gate = new CountDownLatch(1);
        BrokerdClient brokerd = BrokerdClient.builder(BROKERD.socket()).build();
        String jobsTopic = KAFKA.createTopic(1);
        String statusTopic = KAFKA.createTopic(1);
        String progressTopic = KAFKA.createTopic(1);
        JobSpec spec = generationJob();
        KAFKA.broker()
                .createTopic(
                        ChunkTopics.forOutputLocation(spec.streams().get(0).outputLocation()), 2);

        JobID push = cluster.submitJob(pushJob(jars)).get().getJobID();
        JobID generation =
                cluster.submitJob(generationJob(jars, jobsTopic, statusTopic, progressTopic))
                        .get()
                        .getJobID();
        try (JobClient jobs =
                        JobClient.builder()
                                .bootstrapServers(KAFKA.bootstrapServers())
                                .jobsTopic(jobsTopic)
                                .statusTopic(statusTopic)
                                .build();
                StreamReader reader =
                        StreamReader.builder(brokerd, spec, "c0")
                                .bootstrapServers(KAFKA.bootstrapServers())
                                .progressTopic(progressTopic)
                                .open()) {
            jobs.submit(spec);
            jobs.awaitStatus(spec.id(), s -> s.state() == JobState.RUNNING, WAIT);
            // A few chunks, then the reader stops reading: the sink's writers fill the stream's
            // cap and wait for progress that does not come.
            AtomicInteger chunks = new AtomicInteger();
            Await.until(
                    "8 chunks arrive",
                    WAIT,
                    () -> {
                        StreamChunk chunk = reader.acquire(Duration.ofMillis(200));
                        if (chunk != null) {
                            chunk.release();
                            chunks.incrementAndGet();
                        }
                        return chunks.get() >= 8;
                    });
            Await.until(
                    "the source job holds its operator with records seen",
                    WAIT,
                    () -> UserCodeLoaders.RECORDS.get() >= HOLD_AFTER_RECORDS);
            // Each kind of thread Sluice starts runs now, so the test covers them all.
            Await.until(
                    "every kind of Sluice thread runs",
                    WAIT,
                    () ->
                            threadKinds(newSluiceThreads(before))
                                    .containsAll(
                                            List.of(
                                                    "sluice-push-",
                                                    "sluice-brokerd-control",
                                                    "sluice-brokerd-heartbeat",
                                                    "sluice-segment-heartbeat",
                                                    "sluice-sink-progress-",
                                                    "sluice-chunks-",
                                                    "sluice-progress-")));

            for (JobID job : List.of(push, generation)) {
                cluster.cancelJob(job).get();
                assertThat(cluster.requestJobResult(job).get().getApplicationStatus())
                        .isEqualTo(ApplicationStatus.CANCELED);
            }
        } finally {
            UserCodeLoaders.gate.countDown();
        }

        Await.until(
                () ->
                        "no Sluice thread is left after its job; left: "
                                + describe(newSluiceThreads(before)),
                WAIT,
                () -> newSluiceThreads(before).isEmpty());

        // Each job had a class loader on each side: the JobManager's deserialized its source (the
        // enumerator, the scheduler and its policy), the TaskManager's its operators. None is the
        // test's own (UserCodeLoaders ignores that one).
        assertThat(UserCodeLoaders.seen())
                .as("the jobs ran their own and Sluice's classes from the user jar")
                .anySatisfy(seen -> assertThat(seen).startsWith("CountingSchema in"))
                .anySatisfy(seen -> assertThat(seen).startsWith("SluiceSource in"))
                .anySatisfy(seen -> assertThat(seen).startsWith("CountingGenerator in"))
                .anySatisfy(seen -> assertThat(seen).startsWith("GenerationSource in"))
                .anySatisfy(seen -> assertThat(seen).startsWith("RecordingPolicy in"));
        Await.until(
                () ->
                        "no user-code class loader is alive; alive: "
                                + UserCodeLoaders.alive()
                                + "; threads with a user-code context: "
                                + threadsWithUserCodeContext(),
                WAIT,
                () -> {
                    if (UserCodeLoaders.alive().isEmpty()) {
                        return true;
                    }
                    moveRecordMethodCachesOffTheJobs();
                    System.gc();
                    // A collection is dear: one every 100 ms, not every millisecond.
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
                    return false;
                });
    }

    /** A record of the test's own, see below. */
    private record Unpinning(String text) {}

    /**
     * JDK 17 pins one class loader by itself, whoever's: {@code java.lang.runtime.ObjectMethods},
     * which makes every record's {@code equals}, {@code hashCode} and {@code toString}, adapts
     * static method handles to each record's type, and a method handle keeps its last adaptation
     * strongly ({@code MethodHandle.asTypeCache}; JDK 18 keeps one that names another loader's
     * class only softly). So the loader of the record whose methods were made last in the JVM stays
     * reachable until another record's are: a heap dump of this test, run after the module's other
     * ITs, showed the push job's loader held only by {@code ObjectMethods.OBJECT_EQ} adapted to
     * {@code SharedRecordsSubscription.Key}. One loader at most, and not Sluice's doing: making the
     * methods of a record of the test's own moves those caches off the jobs' classes.
     */
    private static void moveRecordMethodCachesOffTheJobs() throws Throwable {
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        MethodHandle text = lookup.findGetter(Unpinning.class, "text", String.class);
        ObjectMethods.bootstrap(
                lookup,
                "equals",
                MethodType.methodType(boolean.class, Unpinning.class, Object.class),
                Unpinning.class,
                "text",
                text);
        ObjectMethods.bootstrap(
                lookup,
                "hashCode",
                MethodType.methodType(int.class, Unpinning.class),
                Unpinning.class,
                "text",
                text);
        ObjectMethods.bootstrap(
                lookup,
                "toString",
                MethodType.methodType(String.class, Unpinning.class),
                Unpinning.class,
                "text",
                text);
    }

    /**
     * PUSH, two readers sharing the TaskManager's shared subscription; the operator holds after
     * some records.
     */
    private static JobGraph pushJob(List<Path> jars) {
        String topic = KAFKA.createTopic(2);
        Properties props = KAFKA.broker().clientProperties();
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < 4 * HOLD_AFTER_RECORDS; i++) {
                producer.send(new ProducerRecord<>(topic, i % 2, null, new byte[100]));
            }
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        env.fromSource(
                        SluiceSource.<Long>builder()
                                .setBootstrapServers(KAFKA.bootstrapServers())
                                .setTopics(topic)
                                .setReadMode(ReadMode.PUSH)
                                .setBrokerdSocket(BROKERD.socket())
                                .setSlots(8, 64 * 1024, 2)
                                .setDeserializer(new CountingSchema(HOLD_AFTER_RECORDS))
                                .build(),
                        WatermarkStrategy.noWatermarks(),
                        "push")
                .sinkTo(new DiscardingSink<>());
        return withJars(env, jars);
    }

    /** GenerationSource into SluiceSink, the scheduler with a policy from the user jar. */
    private static JobGraph generationJob(
            List<Path> jars, String jobsTopic, String statusTopic, String progressTopic) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        env.fromSource(
                        GenerationSource.builder()
                                .setBootstrapServers(KAFKA.bootstrapServers())
                                .setTopics(jobsTopic, statusTopic, progressTopic)
                                .setSchedulingPolicy(new RecordingPolicy())
                                .setReaderTimeout(WAIT)
                                .build(),
                        WatermarkStrategy.noWatermarks(),
                        "generation")
                .sinkTo(
                        SluiceSink.builder()
                                .setBootstrapServers(KAFKA.bootstrapServers())
                                .setProgressTopic(progressTopic)
                                .setMaxTaskSizeBytes(256 * 1024)
                                .build());
        return withJars(env, jars);
    }

    /** One stream of 1 GiB, far more than the test lets through. */
    private static JobSpec generationJob() {
        return new JobSpec(
                "lifecycle",
                List.of(),
                new GeneratorSpec(CountingGenerator.class.getName(), Map.of()),
                256 * 1024,
                List.of(
                        new StreamSpec(
                                "c0",
                                "lifecycle-node",
                                new SplitRule.Channel("c0"),
                                1L << 30,
                                OptionalLong.empty(),
                                64 * 1024)));
    }

    private static JobGraph withJars(StreamExecutionEnvironment env, List<Path> jars) {
        JobGraph graph = env.getStreamGraph().getJobGraph();
        for (Path jar : jars) {
            graph.addJar(new org.apache.flink.core.fs.Path(jar.toUri()));
        }
        return graph;
    }

    /**
     * The jars of the jobs, as a user's fat jar would hold them: Sluice's classes (the connector's,
     * the client's), the user code of the tests' jobs, and what Sluice needs beyond Flink (Kafka's
     * client, Arrow, Jackson). Flink's own classes and SLF4J are loaded parent-first whatever the
     * jar holds; {@link UserCodeLoaders} is left out, so the jobs share it with the test.
     */
    private static List<Path> userJars() throws Exception {
        Set<Path> jars = new LinkedHashSet<>();
        Path own = dir.resolve("sluice-job.jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(own))) {
            for (Class<?> sluice : List.of(SluiceSource.class, StreamReader.class)) {
                Path location = location(sluice);
                if (Files.isDirectory(location)) {
                    addClasses(out, location, "dev/sluice/");
                } else {
                    jars.add(location);
                }
            }
            addClasses(out, location(CountingSchema.class), "dev/sluice/flink/lifecycle/userjar/");
        }
        jars.add(own);
        for (Class<?> dependency :
                List.of(
                        KafkaProducer.class,
                        ObjectMapper.class,
                        JsonFactory.class,
                        JsonAutoDetect.class,
                        JavaTimeModule.class,
                        ValueVector.class,
                        BufferAllocator.class,
                        // arrow-memory-unsafe, a run-time dependency: the allocator Arrow finds.
                        Class.forName(
                                "org.apache.arrow.memory.unsafe.DefaultAllocationManagerFactory",
                                false,
                                NoThreadOutlivesItsJobIT.class.getClassLoader()),
                        Message.class,
                        FlatBufferBuilder.class,
                        Hex.class)) {
            jars.add(location(dependency));
        }
        return new ArrayList<>(jars);
    }

    private static Path location(Class<?> type) throws URISyntaxException {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    /** The files of {@code root} under {@code prefix}. */
    private static void addClasses(JarOutputStream out, Path root, String prefix)
            throws IOException {
        List<Path> files;
        try (Stream<Path> walk = Files.walk(root)) {
            files = walk.filter(Files::isRegularFile).sorted().toList();
        }
        for (Path file : files) {
            String name = root.relativize(file).toString();
            if (!name.startsWith(prefix)) {
                continue;
            }
            out.putNextEntry(new JarEntry(name));
            Files.copy(file, out);
            out.closeEntry();
        }
    }

    /** Sluice threads alive now that were not before the test. */
    private static List<Thread> newSluiceThreads(Set<Thread> before) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith(SluiceThreads.PREFIX) && !before.contains(t))
                .toList();
    }

    private static String describe(List<Thread> threads) {
        StringBuilder text = new StringBuilder();
        for (Thread thread : threads) {
            text.append("\n")
                    .append(thread)
                    .append(", context ")
                    .append(thread.getContextClassLoader());
            for (StackTraceElement frame : thread.getStackTrace()) {
                text.append("\n\tat ").append(frame);
            }
        }
        return text.toString();
    }

    /** Thread names without what names their instance (topic, subtask, stream). */
    private static Set<String> threadKinds(List<Thread> threads) {
        Set<String> kinds = new LinkedHashSet<>();
        for (Thread thread : threads) {
            String name = thread.getName();
            for (String kind :
                    List.of(
                            "sluice-push-",
                            "sluice-sink-progress-",
                            "sluice-chunks-",
                            "sluice-progress-")) {
                if (name.startsWith(kind)) {
                    name = kind;
                }
            }
            kinds.add(name);
        }
        return kinds;
    }

    private static String threadsWithUserCodeContext() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(
                        t -> {
                            ClassLoader context = t.getContextClassLoader();
                            return context != null
                                    && context != ClassLoader.getSystemClassLoader()
                                    && context != ClassLoader.getPlatformClassLoader();
                        })
                .map(t -> t.getName() + " (" + t.getContextClassLoader() + ")")
                .collect(Collectors.joining(", "));
    }
}
