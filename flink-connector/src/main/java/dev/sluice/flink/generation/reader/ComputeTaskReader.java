package dev.sluice.flink.generation.reader;

import dev.sluice.flink.generation.Chunk;
import dev.sluice.flink.generation.ChunkGenerator;
import dev.sluice.flink.generation.ComputeTask;
import dev.sluice.flink.generation.split.ComputeTaskSplit;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.connector.base.source.reader.splitreader.SplitReader;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsAddition;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsChange;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Computes a producer's tasks one after the other on the fetcher thread, so the task thread only
 * emits: reads each task's bytes from its generator and cuts them into chunks, one per fetch, so
 * that a chunk goes out as soon as it is computed (its stream's reader may be waiting for it) and
 * checkpoints and the emitted chunks' backpressure keep pace. A failing generator ends its task
 * with the failure noted for the scheduler; the producer goes on with the next task.
 */
final class ComputeTaskReader implements SplitReader<Chunk, ComputeTaskSplit> {
    private static final Logger LOG = LoggerFactory.getLogger(ComputeTaskReader.class);

    private final ProducerTasks producer;
    private final Deque<ComputeTaskSplit> tasks = new ArrayDeque<>();
    private ComputeTaskSplit current;
    private InputStream bytes;
    private int nextChunk;
    private long bytesEmitted;
    private long preloadMillis;

    ComputeTaskReader(ProducerTasks producer) {
        this.producer = producer;
    }

    @Override
    public GeneratedChunks fetch() {
        if (current == null) {
            current = tasks.poll();
            if (current == null) {
                return new GeneratedChunks(null, List.of(), Set.of());
            }
            nextChunk = current.emittedChunks();
            bytesEmitted = 0;
            preloadMillis = 0;
        }
        ComputeTask task = current.task();
        String id = current.splitId();
        if (producer.isDropped(task.job().id(), id)) {
            return finish(id, List.of(), "", true);
        }
        List<Chunk> chunks = new ArrayList<>();
        try {
            if (bytes == null) {
                // The scheduler's measure of this producer leaves the job's preload out.
                long asked = System.nanoTime();
                ChunkGenerator generator = producer.generator(task.job());
                preloadMillis = (System.nanoTime() - asked) / 1_000_000;
                bytes = generator.compute(task);
                bytes.skipNBytes((long) nextChunk * task.streamSpec().chunkSizeBytes());
            }
            if (nextChunk < task.chunkCount()) {
                Chunk chunk = readChunk(current, nextChunk);
                chunks.add(chunk);
                bytesEmitted += chunk.payload().length;
                nextChunk++;
            }
            if (nextChunk == task.chunkCount()) {
                if (bytes.read() != -1) {
                    throw new IOException(
                            "the generator gave more than the task's " + task.length() + " bytes");
                }
                return finish(id, chunks, "", false);
            }
            return new GeneratedChunks(id, chunks, Set.of());
        } catch (Exception e) {
            String failure = e.getClass().getSimpleName() + ": " + e.getMessage();
            LOG.warn("task {} failed: {}", id, failure, e);
            return finish(id, List.of(), failure, false);
        }
    }

    /** Chunk {@code index} of the split's task, sent the way the scheduler chose for the split. */
    private Chunk readChunk(ComputeTaskSplit split, int index) throws IOException {
        ComputeTask task = split.task();
        int size = task.streamSpec().chunkSizeBytes();
        long start = (long) index * size;
        int length = (int) Math.min(size, task.length() - start);
        // Read in place: readNBytes(length) gathers 8 KiB pieces and copies them into the array it
        // returns, a second copy of every byte and twice the allocation.
        byte[] payload = new byte[length];
        int read = bytes.readNBytes(payload, 0, length);
        if (read < length) {
            throw new IOException(
                    "the generator gave "
                            + (start + read)
                            + " of the task's "
                            + task.length()
                            + " bytes");
        }
        boolean eos = task.isLast() && index == task.chunkCount() - 1;
        return new Chunk(
                task.job().id(),
                task.stream(),
                task.streamSpec().outputLocation(),
                task.firstSeq() + index,
                eos,
                payload,
                split.transport());
    }

    private GeneratedChunks finish(String id, List<Chunk> chunks, String failure, boolean dropped) {
        producer.ended(
                id, new ProducerTasks.Outcome(failure, bytesEmitted, dropped, preloadMillis));
        closeBytes();
        current = null;
        Set<String> finished = new HashSet<>();
        finished.add(id);
        return new GeneratedChunks(chunks.isEmpty() ? null : id, chunks, finished);
    }

    private void closeBytes() {
        if (bytes != null) {
            try {
                bytes.close();
            } catch (IOException e) {
                LOG.debug("closing a task's bytes", e);
            }
            bytes = null;
        }
    }

    @Override
    public void handleSplitsChanges(SplitsChange<ComputeTaskSplit> change) {
        if (!(change instanceof SplitsAddition)) {
            throw new UnsupportedOperationException(change + ": only additions are supported");
        }
        // A task handed out again after its drop came is wanted again: the scheduler's events and
        // splits reach a producer in the order it sent them.
        change.splits().forEach(split -> producer.undrop(split.splitId()));
        tasks.addAll(change.splits());
    }

    @Override
    public void wakeUp() {
        // fetch() never blocks but inside the generator, which has to finish its chunk.
    }

    @Override
    public void close() {
        closeBytes();
    }
}
