package dev.sluice.flink.generation.reader;

import dev.sluice.flink.generation.Chunk;
import dev.sluice.flink.generation.scheduler.JobEvents;
import dev.sluice.flink.generation.split.ComputeTaskSplit;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.base.source.reader.SingleThreadMultiplexSourceReaderBase;

/**
 * A producer (docs/generation.md, "Tasks and chunks"): announces its capacity, then asks the
 * scheduler for two tasks when it starts and for one more each time it finishes one, so that one
 * task computes while the other's chunks leave; computes them on the fetcher thread with the job's
 * generator and emits their chunks; tells the scheduler when a task is done, failed or dropped;
 * drops the tasks of a job the scheduler ended, and a task of which another copy won.
 */
@Internal
public final class GenerationSourceReader
        extends SingleThreadMultiplexSourceReaderBase<
                Chunk, Chunk, ComputeTaskSplit, TaskProgress> {
    static final int TASKS_IN_FLIGHT = 2;

    /**
     * How fast this producer computes beside the others, set in the TaskManager's Flink
     * configuration: 1 for the common speed, 0.25 for a producer four times slower
     * (docs/generation.md, "Producers of unequal speed"). The scheduler uses it only until it has
     * measured the producer.
     */
    public static final ConfigOption<Double> SPEED_FACTOR =
            ConfigOptions.key("sluice.producer.speed-factor")
                    .doubleType()
                    .defaultValue(1.0)
                    .withDescription(
                            "How fast this TaskManager's Sluice producers compute beside the"
                                    + " others (1 the common speed); the scheduler's estimate"
                                    + " until it has measured them.");

    private final ProducerTasks producer;

    public GenerationSourceReader(SourceReaderContext context) {
        this(context, new ProducerTasks(context.getIndexOfSubtask()));
    }

    private GenerationSourceReader(SourceReaderContext context, ProducerTasks producer) {
        super(
                () -> new ComputeTaskReader(producer),
                (chunk, output, task) -> {
                    output.collect(chunk);
                    task.emitted();
                },
                new Configuration(),
                context);
        this.producer = producer;
    }

    @Override
    public void start() {
        double speedFactor = context.getConfiguration().get(SPEED_FACTOR);
        if (!(speedFactor > 0) || Double.isInfinite(speedFactor)) {
            throw new IllegalArgumentException(
                    SPEED_FACTOR.key() + " must be a positive number, got " + speedFactor);
        }
        super.start();
        context.sendSourceEventToCoordinator(
                new JobEvents.ProducerReady(TASKS_IN_FLIGHT, speedFactor));
        for (int i = 0; i < TASKS_IN_FLIGHT; i++) {
            context.sendSplitRequest();
        }
    }

    @Override
    protected void onSplitFinished(Map<String, TaskProgress> finished) {
        finished.forEach(
                (taskId, task) -> {
                    ProducerTasks.Outcome outcome = producer.takeOutcome(taskId);
                    context.sendSourceEventToCoordinator(
                            new JobEvents.TaskDone(
                                    task.jobId(),
                                    taskId,
                                    outcome.failure(),
                                    outcome.bytesEmitted(),
                                    outcome.dropped(),
                                    outcome.preloadMillis()));
                    context.sendSplitRequest();
                });
    }

    @Override
    public void handleSourceEvents(SourceEvent event) {
        if (event instanceof JobEvents.DropJob drop) {
            producer.drop(drop.jobId());
        } else if (event instanceof JobEvents.DropTask drop) {
            producer.dropTask(drop.taskId());
        }
    }

    @Override
    protected TaskProgress initializedState(ComputeTaskSplit split) {
        return new TaskProgress(split);
    }

    @Override
    protected ComputeTaskSplit toSplitType(String splitId, TaskProgress state) {
        return state.toSplit();
    }

    @Override
    public void close() throws Exception {
        try {
            super.close();
        } finally {
            producer.close();
        }
    }
}
