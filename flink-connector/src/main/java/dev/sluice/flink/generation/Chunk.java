package dev.sluice.flink.generation;

import dev.sluice.client.job.Transport;
import dev.sluice.client.write.ChunkRecords;
import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;

/**
 * A piece of a stream on its way from a generator to its output location: what the generation job
 * emits and {@code SluiceSink} writes as a chunk record (docs/formats.md, "Chunk record"). Chunks
 * of one stream are numbered from 0 without gaps; the last one carries {@code eos}.
 *
 * @param outputLocation the node that reads the stream; its chunk topic is {@code
 *     ChunkTopics.forOutputLocation(outputLocation)}
 * @param transport the way the sink sends it, as the scheduler decided for its task
 *     (docs/generation.md, "Transports"): {@link Transport#KAFKA} through the chunk topic, {@link
 *     Transport#LOCAL} through the sink's shared-memory segment that the output location's daemon
 *     reads; never {@link Transport#AUTO}, which the scheduler resolves at hand-out
 */
@PublicEvolving
public record Chunk(
        String job,
        String stream,
        String outputLocation,
        long seq,
        boolean eos,
        byte[] payload,
        Transport transport) {

    public Chunk {
        Objects.requireNonNull(job, "job");
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(outputLocation, "outputLocation");
        Objects.requireNonNull(payload, "payload");
        Objects.requireNonNull(transport, "transport");
        if (seq < 0) {
            throw new IllegalArgumentException("seq " + seq + " < 0");
        }
        if (transport == Transport.AUTO) {
            throw new IllegalArgumentException(
                    "a chunk goes through KAFKA or LOCAL; AUTO is for the scheduler to resolve");
        }
    }

    /** A chunk that goes through the chunk topic. */
    public Chunk(
            String job,
            String stream,
            String outputLocation,
            long seq,
            boolean eos,
            byte[] payload) {
        this(job, stream, outputLocation, seq, eos, payload, Transport.KAFKA);
    }

    @Override
    public String toString() {
        return ChunkRecords.describe(job, stream, outputLocation, seq, eos, payload.length);
    }
}
