package dev.sluice.cluster;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.job.JobClient;
import dev.sluice.client.job.JobCommand;
import dev.sluice.client.job.JobCommandReader;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.StreamSpec;
import dev.sluice.client.read.StreamReader;
import dev.sluice.printing.Channel;
import dev.sluice.printing.ChannelReceiver;
import dev.sluice.printing.SequentialRip;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * An output-location node of the demo cluster: the print heads of some inks on one host. It watches
 * the jobs topic and, for every print job submitted from then on with a stream to one of its output
 * locations, reads that stream through its host's {@code sluice-brokerd} at the job's constant
 * speed, as a print head consumes rows ({@link ChannelReceiver}: in {@code seq} order, each chunk
 * once, the raster's length), then reports what it printed on {@value Printed#TOPIC}. The scheduler
 * starts a job once every stream has its reader, so a print head that is up before a submission
 * reads the job from its first chunk.
 *
 * <p>With {@code --metrics ADDRESS:PORT} it serves its streams' delivery as Prometheus metrics
 * ({@link ReaderMetrics}); without, it listens nowhere.
 *
 * <p>{@code --bootstrap-servers HOST:PORT,... --host NAME --locations LOC[,LOC...] [--socket PATH]
 * [--ready-file PATH] [--metrics ADDRESS:PORT]}
 */
public final class PrintHead {
    private static final Duration CHANNEL_TIMEOUT = Duration.ofMinutes(10);

    private final String bootstrapServers;
    private final String host;
    private final Set<String> locations;
    private final BrokerdClient brokerd;
    private final KafkaProducer<byte[], byte[]> reports;
    // Every channel's reader publishes its delivery progress through it, job after job.
    private final Producer<byte[], byte[]> progress;
    private final ExecutorService channels = Executors.newCachedThreadPool();
    private final ReaderMetrics metrics;

    private PrintHead(String bootstrapServers, String host, Set<String> locations, Path socket) {
        this.bootstrapServers = bootstrapServers;
        this.host = host;
        this.locations = locations;
        this.metrics = new ReaderMetrics(host, System::currentTimeMillis);
        this.brokerd = BrokerdClient.builder(socket).build();
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        this.reports =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
        this.progress = StreamReader.newProgressProducer(bootstrapServers, Map.of());
    }

    public static void main(String[] args) throws Exception {
        PrintHead head;
        String readyFile;
        InetSocketAddress metricsAddress;
        try {
            Arguments arguments = Arguments.parse(args);
            head =
                    new PrintHead(
                            arguments.required("--bootstrap-servers"),
                            arguments.required("--host"),
                            Set.of(arguments.required("--locations").split(",")),
                            Path.of(arguments.optional("--socket", Topology.BROKERD_SOCKET)));
            readyFile = arguments.optional("--ready-file", null);
            metricsAddress = arguments.address("--metrics");
        } catch (IllegalArgumentException e) {
            Arguments.exit("print head", e);
            return;
        }
        if (metricsAddress != null) {
            head.metrics.serve(metricsAddress);
        }
        head.run(readyFile);
    }

    private void run(String readyFile) throws IOException, InterruptedException {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        try (KafkaConsumer<byte[], byte[]> consumer =
                        new KafkaConsumer<>(
                                props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
                JobCommandReader commands = new JobCommandReader(consumer)) {
            List<TopicPartition> partitions =
                    partitionsOnceCreated(consumer, JobClient.DEFAULT_JOBS_TOPIC);
            consumer.assign(partitions);
            // Jobs submitted from now on: a restarted print head does not print old jobs again.
            consumer.seekToEnd(partitions);
            partitions.forEach(consumer::position);
            if (readyFile != null) {
                Files.writeString(Path.of(readyFile), host + "\n");
            }
            System.out.printf("print head on %s: output locations %s%n", host, locations);
            while (true) {
                for (JobCommand command : commands.poll(Duration.ofSeconds(1))) {
                    if (command instanceof JobCommand.Submit submit) {
                        print(submit.spec());
                    }
                }
            }
        }
    }

    /**
     * The topic's partitions, once it is there: a print head starts with the cluster, before its
     * client has created the topics, and with its broker (docker-compose.yml).
     */
    private List<TopicPartition> partitionsOnceCreated(
            KafkaConsumer<byte[], byte[]> consumer, String topic) throws InterruptedException {
        boolean told = false;
        while (true) {
            try {
                List<PartitionInfo> found = consumer.partitionsFor(topic, Duration.ofSeconds(10));
                if (!found.isEmpty()) {
                    return found.stream()
                            .map(p -> new TopicPartition(p.topic(), p.partition()))
                            .toList();
                }
            } catch (TimeoutException e) {
                // No broker answered yet.
            }
            if (!told) {
                System.out.printf("print head on %s: waiting for topic %s%n", host, topic);
                told = true;
            }
            Thread.sleep(1000);
        }
    }

    private void print(JobSpec job) {
        for (StreamSpec stream : job.streams()) {
            if (locations.contains(stream.outputLocation())) {
                channels.submit(() -> printChannel(job, stream));
            }
        }
    }

    private void printChannel(JobSpec job, StreamSpec stream) {
        Printed printed;
        try {
            // Built from the job spec, a paced reader starts printing one task after its first
            // chunk came (docs/stream-reader.md, "Start delay"): a stream's chunks come a task at
            // a time, and a late task must not leave the head without rows.
            StreamReader reader =
                    StreamReader.builder(brokerd, job, stream.name())
                            .progressProducer(progress)
                            .open();
            metrics.reading(job.id(), stream.name(), stream.outputLocation(), reader::stats);
            ChannelReceiver.Result result =
                    new ChannelReceiver(
                                    Channel.ofStream(stream.name()),
                                    reader,
                                    stream.sizeBytes(),
                                    CHANNEL_TIMEOUT)
                            .call();
            printed =
                    new Printed(
                            job.id(),
                            stream.name(),
                            host,
                            result.raster().length,
                            result.chunks(),
                            SequentialRip.hex(result.sha256()),
                            result.stats().starvationEvents(),
                            result.stats().achievedRateBytesPerSecond(),
                            result.stats().latenessP99Nanos() / 1e6,
                            null);
        } catch (Exception e) {
            printed = new Printed(job.id(), stream.name(), host, 0, 0, "", 0, 0, 0, e.toString());
        } finally {
            metrics.ended(job.id(), stream.name());
        }
        System.out.printf(
                "%s/%s: %d bytes, %d chunks, %s%n",
                printed.job(),
                printed.stream(),
                printed.bytes(),
                printed.chunks(),
                printed.error() == null ? "sha-256 " + printed.sha256() : printed.error());
        reports.send(
                new ProducerRecord<>(
                        Printed.TOPIC,
                        (printed.job() + "/" + printed.stream()).getBytes(),
                        printed.toJson()));
        reports.flush();
    }
}
