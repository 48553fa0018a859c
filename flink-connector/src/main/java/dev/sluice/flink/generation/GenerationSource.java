package dev.sluice.flink.generation;

import dev.sluice.flink.generation.reader.GenerationSourceReader;
import dev.sluice.flink.generation.scheduler.GenerationEnumerator;
import dev.sluice.flink.generation.scheduler.GenerationState;
import dev.sluice.flink.generation.scheduler.GenerationStateSerializer;
import dev.sluice.flink.generation.scheduler.KafkaControlPlane;
import dev.sluice.flink.generation.split.ComputeTaskSplit;
import dev.sluice.flink.generation.split.ComputeTaskSplitSerializer;
import java.util.Properties;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * The generation runtime as a Flink source: its enumerator is the scheduler of the jobs submitted
 * on the jobs topic, its readers are the producers that compute their tasks with each job's {@link
 * ChunkGenerator}, and it emits the chunks of every stream, numbered, for {@code SluiceSink} to
 * write to the streams' output locations.
 *
 * <pre>{@code
 * env.fromSource(GenerationSource.builder().setBootstrapServers("kafka:9092").build(),
 *                 WatermarkStrategy.noWatermarks(), "generation")
 *         .sinkTo(SluiceSink.builder()...build());
 * }</pre>
 */
@PublicEvolving
public final class GenerationSource
        implements Source<Chunk, ComputeTaskSplit, GenerationState>, ResultTypeQueryable<Chunk> {
    private static final long serialVersionUID = 1L;

    private final Properties kafka;
    private final String jobsTopic;
    private final String statusTopic;
    private final String progressTopic;
    private final SchedulingPolicy policy;
    private final GenerationEnumerator.Settings settings;

    GenerationSource(
            Properties kafka,
            String jobsTopic,
            String statusTopic,
            String progressTopic,
            SchedulingPolicy policy,
            GenerationEnumerator.Settings settings) {
        this.kafka = kafka;
        this.jobsTopic = jobsTopic;
        this.statusTopic = statusTopic;
        this.progressTopic = progressTopic;
        this.policy = policy;
        this.settings = settings;
    }

    public static GenerationSourceBuilder builder() {
        return new GenerationSourceBuilder();
    }

    @Override
    public Boundedness getBoundedness() {
        return Boundedness.CONTINUOUS_UNBOUNDED;
    }

    @Override
    public SourceReader<Chunk, ComputeTaskSplit> createReader(SourceReaderContext context) {
        return new GenerationSourceReader(context);
    }

    @Override
    public SplitEnumerator<ComputeTaskSplit, GenerationState> createEnumerator(
            SplitEnumeratorContext<ComputeTaskSplit> context) {
        return restoreEnumerator(context, GenerationState.empty());
    }

    @Override
    public SplitEnumerator<ComputeTaskSplit, GenerationState> restoreEnumerator(
            SplitEnumeratorContext<ComputeTaskSplit> context, GenerationState state) {
        return new GenerationEnumerator(
                context,
                () -> new KafkaControlPlane(kafka, jobsTopic, statusTopic, progressTopic),
                policy,
                settings,
                System::currentTimeMillis,
                state);
    }

    @Override
    public SimpleVersionedSerializer<ComputeTaskSplit> getSplitSerializer() {
        return new ComputeTaskSplitSerializer();
    }

    @Override
    public SimpleVersionedSerializer<GenerationState> getEnumeratorCheckpointSerializer() {
        return new GenerationStateSerializer();
    }

    @Override
    public TypeInformation<Chunk> getProducedType() {
        return TypeInformation.of(Chunk.class);
    }
}
