package dev.sluice.flink.generation.reader;

import dev.sluice.flink.generation.Chunk;
import dev.sluice.flink.generation.scheduler.JobEvents;
import dev.sluice.flink.generation.split.ComputeTaskSplit;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.base.source.reader.SingleThreadMultiplexSourceReaderBase;

/**
 * A producer (docs/generation.md, "Tasks and chunks"): asks the scheduler for two tasks when it
 * starts and for one more each time it finishes one, so that one task computes while the other's
 * chunks leave; computes them on the fetcher thread with the job's generator and emits their
 * chunks; tells the scheduler when a task is done or failed; drops the tasks of a job the scheduler
 * ended.
 */
@Internal
public final class GenerationSourceReader
        extends SingleThreadMultiplexSourceReaderBase<
                Chunk, Chunk, ComputeTaskSplit, TaskProgress> {
    static final int TASKS_IN_FLIGHT = 2;

    private final ProducerTasks producer;

    public GenerationSourceReader(SourceReaderContext context) {
        this(context, new ProducerTasks());
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
        super.start();
        for (int i = 0; i < TASKS_IN_FLIGHT; i++) {
            context.sendSplitRequest();
        }
    }

    @Override
    protected void onSplitFinished(Map<String, TaskProgress> finished) {
        finished.forEach(
                (taskId, task) -> {
                    context.sendSourceEventToCoordinator(
                            new JobEvents.TaskDone(
                                    task.jobId(), taskId, producer.takeFailure(taskId)));
                    context.sendSplitRequest();
                });
    }

    @Override
    public void handleSourceEvents(SourceEvent event) {
        if (event instanceof JobEvents.DropJob drop) {
            producer.drop(drop.jobId());
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
