package dev.sluice.flink.sink;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.progress.ProgressListener;
import dev.sluice.flink.generation.Chunk;
import java.io.IOException;
import java.util.Properties;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.TaskInfo;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Writes the chunks of generated streams to Kafka as chunk records (docs/formats.md, "Chunk
 * record"), each on the topic of its stream's output location ({@code sluice.chunks.<location>}),
 * spread over the topic's partitions ({@link ChunkPartitioning}), at least once, and with a bounded
 * number of bytes in flight per stream: a stream whose readers do not keep up (or have stopped)
 * stops its generation instead of filling the broker. A chunk the scheduler sent the local way
 * ({@code LOCAL}) goes into a shared-memory segment that the daemon of the writer's host reads
 * instead, given {@link SluiceSinkBuilder#setBrokerdSocket} (docs/sluice-sink.md, "Transports").
 *
 * <pre>{@code
 * SluiceSink sink = SluiceSink.builder()
 *         .setBootstrapServers("broker-1:9092")
 *         .setMaxTaskSizeBytes(16 << 20)     // cap per stream: 16 MiB × parallelism × 4
 *         .build();
 * chunks.sinkTo(sink);
 * }</pre>
 *
 * <p>In flight means written and not yet delivered: delivery progress comes from the stream readers
 * on the progress topic ({@code sluice-progress}), which each writer reads. A stream's cap is
 * {@code max task size × parallelism × 4} (docs/sluice-sink.md, "Bounded buffering"), at most
 * {@link SluiceSinkBuilder#setMaxInFlightBytesPerStream} (256 MiB), or a fixed {@link
 * SluiceSinkBuilder#setInFlightBytesPerStream}; each writer holds at most its equal part.
 * Checkpoints wait until every chunk written is acknowledged; a replay after a restore may write a
 * chunk twice, which the daemon drops by {@code seq}, so each stream is delivered exactly once. The
 * details are in docs/sluice-sink.md.
 */
@PublicEvolving
public final class SluiceSink implements Sink<Chunk> {
    private static final long serialVersionUID = 1L;

    private final SinkSettings settings;

    SluiceSink(SinkSettings settings) {
        this.settings = settings;
    }

    public static SluiceSinkBuilder builder() {
        return new SluiceSinkBuilder();
    }

    /** The cap on a stream's bytes in flight over all writers of a sink run by {@code writers}. */
    public long capPerStream(int writers) {
        return settings.capPerStream(writers);
    }

    @Override
    public SinkWriter<Chunk> createWriter(WriterInitContext context) throws IOException {
        TaskInfo task = context.getTaskInfo();
        int subtask = task.getIndexOfThisSubtask();
        String clientId =
                ("sluice-sink-" + task.getTaskName() + "-" + subtask)
                        .replaceAll("[^A-Za-z0-9._-]+", "_");

        // One client of the host's daemon for the writer's local channels, one per chunk topic.
        LocalTransportSettings local = settings.local();
        LocalChunkSender.Opener localChannels =
                local == null
                        ? null
                        : LocalChunkSender.channels(
                                BrokerdClient.builder(local.socket()).build(), local.channel());

        Properties producerProps = new Properties();
        producerProps.putAll(settings.producer());
        producerProps.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, clientId);

        KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(
                        producerProps, new ByteArraySerializer(), new ByteArraySerializer());
        KafkaConsumer<byte[], byte[]> consumer;
        try {
            consumer = ProgressListener.newConsumer(settings.consumer(), clientId + "-progress");
        } catch (RuntimeException e) {
            producer.close();
            throw e;
        }
        return new SluiceSinkWriter(
                settings,
                producer,
                consumer,
                localChannels,
                context.getMailboxExecutor(),
                context.metricGroup(),
                subtask,
                task.getNumberOfParallelSubtasks());
    }
}
