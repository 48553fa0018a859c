package dev.sluice.flink.generation;

import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.StreamSpec;
import org.apache.flink.annotation.PublicEvolving;

/**
 * A piece of one stream to compute: {@code length} bytes from {@code offset}. Tasks cut a stream
 * into pieces of the job's task size (the last one shorter); task {@code index} sends chunks from
 * {@code index × ⌈taskSize / chunkSize⌉} on, so producers number their chunks without asking
 * anyone.
 */
@PublicEvolving
public record ComputeTask(JobSpec job, String stream, int index, long offset, long length) {

    public ComputeTask {
        if (job.stream(stream).isEmpty()) {
            throw new IllegalArgumentException("job " + job.id() + " has no stream " + stream);
        }
        if (index < 0 || offset < 0 || length < 1) {
            throw new IllegalArgumentException(
                    "task " + index + " of " + stream + ": [" + offset + ", +" + length + ")");
        }
    }

    public StreamSpec streamSpec() {
        return job.stream(stream).orElseThrow();
    }

    /** How many tasks cut {@code stream} of {@code job}. */
    public static int count(JobSpec job, StreamSpec stream) {
        return (int) ((stream.sizeBytes() + job.taskSizeBytes() - 1) / job.taskSizeBytes());
    }

    /** Task {@code index} of {@code stream}. */
    public static ComputeTask of(JobSpec job, StreamSpec stream, int index) {
        long offset = index * job.taskSizeBytes();
        return new ComputeTask(
                job,
                stream.name(),
                index,
                offset,
                Math.min(job.taskSizeBytes(), stream.sizeBytes() - offset));
    }

    /** The seq of this task's first chunk. */
    public long firstSeq() {
        int chunk = streamSpec().chunkSizeBytes();
        return index * ((job.taskSizeBytes() + chunk - 1) / chunk);
    }

    /** The seq of this task's last chunk: the task is delivered once its stream's readers are. */
    public long lastSeq() {
        return firstSeq() + chunkCount() - 1;
    }

    /** How many chunks this task sends. */
    public int chunkCount() {
        int chunk = streamSpec().chunkSizeBytes();
        return (int) ((length + chunk - 1) / chunk);
    }

    /** Whether this task ends its stream: its last chunk carries the end of stream. */
    public boolean isLast() {
        return offset + length == streamSpec().sizeBytes();
    }

    public String id() {
        return job.id() + "/" + stream + "/" + index;
    }
}
