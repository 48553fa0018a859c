package dev.sluice.flink.generation.reader;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.Transport;
import dev.sluice.flink.generation.Chunk;
import dev.sluice.flink.generation.ComputeTask;
import dev.sluice.flink.generation.PatternGenerator;
import dev.sluice.flink.generation.TestJobs;
import dev.sluice.flink.generation.split.ComputeTaskSplit;
import dev.sluice.flink.generation.split.ComputeTaskSplitSerializer;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsAddition;
import org.junit.jupiter.api.Test;

/** Cutting tasks into chunks: numbering, end of stream, restarts, generators that misbehave. */
class ComputeTaskReaderTest {
    // A stream of 10,000 bytes in tasks of 4,000 (3 tasks) and chunks of 1,500 (3 per task).
    private static JobSpec job(Map<String, String> parameters) {
        return TestJobs.job("j", 1, 10_000, 4_000, 1500, PatternGenerator.class, parameters);
    }

    private static ComputeTask task(JobSpec job, int index) {
        return ComputeTask.of(job, job.streams().get(0), index);
    }

    /** Runs the reader over {@code splits} to their end: the chunks, and the finished task ids. */
    private static List<Chunk> run(
            ProducerTasks producer, Set<String> finished, ComputeTaskSplit... splits) {
        return run(producer, finished, () -> {}, splits);
    }

    /** As above, {@code handedOut} running once the splits were handed to the reader. */
    private static List<Chunk> run(
            ProducerTasks producer,
            Set<String> finished,
            Runnable handedOut,
            ComputeTaskSplit... splits) {
        ComputeTaskReader reader = new ComputeTaskReader(producer);
        reader.handleSplitsChanges(new SplitsAddition<>(List.of(splits)));
        handedOut.run();
        List<Chunk> chunks = new ArrayList<>();
        while (finished.size() < splits.length) {
            GeneratedChunks fetched = reader.fetch();
            if (fetched.nextSplit() != null) {
                for (Chunk c; (c = fetched.nextRecordFromSplit()) != null; ) {
                    chunks.add(c);
                }
            }
            finished.addAll(fetched.finishedSplits());
        }
        reader.close();
        return chunks;
    }

    @Test
    void tasksBecomeNumberedChunksOfTheStreamAndTheLastEndsIt() {
        JobSpec job = job(Map.of());
        assertThat(ComputeTask.count(job, job.streams().get(0))).isEqualTo(3);
        Set<String> finished = new HashSet<>();
        List<Chunk> chunks =
                run(
                        new ProducerTasks(0),
                        finished,
                        new ComputeTaskSplit(task(job, 2), 0),
                        new ComputeTaskSplit(task(job, 0), 0),
                        new ComputeTaskSplit(task(job, 1), 0));
        chunks.sort((a, b) -> Long.compare(a.seq(), b.seq()));
        // Tasks of 4,000 B: chunks 1500, 1500, 1000; the last task's 2,000 B: 1500, 500.
        assertThat(chunks).extracting(Chunk::seq).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L);
        assertThat(chunks)
                .extracting(c -> c.payload().length)
                .containsExactly(1500, 1500, 1000, 1500, 1500, 1000, 1500, 500);
        assertThat(chunks).filteredOn(Chunk::eos).extracting(Chunk::seq).containsExactly(7L);
        long k = 0;
        for (Chunk chunk : chunks) {
            for (byte b : chunk.payload()) {
                assertThat(b).isEqualTo(PatternGenerator.byteAt("c0", k++));
            }
        }
        assertThat(k).isEqualTo(10_000);
        assertThat(chunks).allMatch(c -> c.outputLocation().equals("node-0"));
    }

    @Test
    void chunksGoTheWayTheSchedulerChoseForTheirTask() {
        JobSpec job = job(Map.of());
        List<Chunk> chunks =
                run(
                        new ProducerTasks(0),
                        new HashSet<>(),
                        new ComputeTaskSplit(task(job, 0), 0, Transport.LOCAL),
                        new ComputeTaskSplit(task(job, 1), 0, Transport.KAFKA));

        assertThat(chunks)
                .filteredOn(c -> c.seq() < 3)
                .hasSize(3)
                .allMatch(c -> c.transport() == Transport.LOCAL);
        assertThat(chunks)
                .filteredOn(c -> c.seq() >= 3)
                .hasSize(3)
                .allMatch(c -> c.transport() == Transport.KAFKA);
    }

    @Test
    void aTaskCheckpointedMidwayResumesThroughKafka() {
        // Restored, its producer may be on another host than the local way was chosen for.
        TaskProgress progress =
                new TaskProgress(new ComputeTaskSplit(task(job(Map.of()), 1), 1, Transport.LOCAL));
        progress.emitted();

        assertThat(progress.toSplit().emittedChunks()).isEqualTo(2);
        assertThat(progress.toSplit().transport()).isEqualTo(Transport.KAFKA);
    }

    @Test
    void aRestoredTaskSkipsTheChunksItEmittedBefore() throws IOException {
        JobSpec job = job(Map.of());
        ComputeTaskSplitSerializer serializer = new ComputeTaskSplitSerializer();
        ComputeTaskSplit restored =
                serializer.deserialize(
                        serializer.getVersion(),
                        serializer.serialize(new ComputeTaskSplit(task(job, 1), 2)));
        List<Chunk> chunks = run(new ProducerTasks(0), new HashSet<>(), restored);
        assertThat(chunks).extracting(Chunk::seq).containsExactly(5L);
        assertThat(chunks.get(0).payload())
                .hasSize(1000)
                .startsWith(PatternGenerator.byteAt("c0", 7000));
    }

    @Test
    void aGeneratorThatThrowsOrGivesTooFewBytesFailsItsTaskOnly() {
        JobSpec job = job(Map.of("failAt", "0", "short", "1"));
        ProducerTasks producer = new ProducerTasks(0);
        Set<String> finished = new HashSet<>();
        List<Chunk> chunks =
                run(
                        producer,
                        finished,
                        new ComputeTaskSplit(task(job, 0), 0),
                        new ComputeTaskSplit(task(job, 1), 0),
                        new ComputeTaskSplit(task(job, 2), 0));
        assertThat(finished).containsExactlyInAnyOrder("j/c0/0", "j/c0/1", "j/c0/2");
        assertThat(producer.takeOutcome("j/c0/0").failure()).contains("no ink for task 0");
        assertThat(producer.takeOutcome("j/c0/1").failure())
                .contains("3999 of the task's 4000 bytes");
        assertThat(producer.takeOutcome("j/c0/2"))
                .isEqualTo(new ProducerTasks.Outcome("", 2000, false, 0));
        assertThat(chunks).extracting(Chunk::seq).contains(6L, 7L);
    }

    @Test
    void aDroppedJobsTasksEndWithoutChunks() {
        JobSpec job = job(Map.of());
        ProducerTasks producer = new ProducerTasks(0);
        producer.drop("j");
        Set<String> finished = new HashSet<>();
        assertThat(run(producer, finished, new ComputeTaskSplit(task(job, 0), 0))).isEmpty();
        assertThat(finished).containsExactly("j/c0/0");
        assertThat(producer.takeOutcome("j/c0/0").dropped()).isTrue();
    }

    @Test
    void aDroppedTaskEndsWithoutItsChunksWhileTheJobsOtherTasksGoOn() {
        JobSpec job = job(Map.of());
        ProducerTasks producer = new ProducerTasks(0);
        // A drop that came before the task was handed out again does not hold.
        producer.dropTask("j/c0/1");
        Set<String> finished = new HashSet<>();
        List<Chunk> chunks =
                run(
                        producer,
                        finished,
                        () -> producer.dropTask("j/c0/0"),
                        new ComputeTaskSplit(task(job, 0), 0),
                        new ComputeTaskSplit(task(job, 1), 0));
        assertThat(finished).containsExactlyInAnyOrder("j/c0/0", "j/c0/1");
        assertThat(producer.takeOutcome("j/c0/0"))
                .isEqualTo(new ProducerTasks.Outcome("", 0, true, 0));
        assertThat(producer.takeOutcome("j/c0/1"))
                .usingRecursiveComparison()
                .ignoringFields("preloadMillis")
                .isEqualTo(new ProducerTasks.Outcome("", 4000, false, 0));
        assertThat(chunks).extracting(Chunk::seq).containsExactly(3L, 4L, 5L);
    }

    @Test
    void theTaskThatPreloadsItsJobReportsHowLongThePreloadTookAndTheNextTaskNone() {
        JobSpec job = job(Map.of("preloadMillis", "300"));
        ProducerTasks producer = new ProducerTasks(0);
        run(
                producer,
                new HashSet<>(),
                new ComputeTaskSplit(task(job, 0), 0),
                new ComputeTaskSplit(task(job, 1), 0));
        assertThat(producer.takeOutcome("j/c0/0").preloadMillis()).isBetween(300L, 10_000L);
        assertThat(producer.takeOutcome("j/c0/1").preloadMillis()).isZero();
    }
}
