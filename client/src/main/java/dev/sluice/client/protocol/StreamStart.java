package dev.sluice.client.protocol;

import dev.sluice.client.annotation.Internal;
import java.util.Objects;

/**
 * Where a stream resumes in a CHUNK_STREAMS SUBSCRIBE: the reader already has its chunks below
 * {@code nextSeq}, so the daemon starts the stream there instead of at seq 0.
 */
@Internal
public record StreamStart(String job, String stream, long nextSeq) {
    public StreamStart {
        Objects.requireNonNull(job, "job");
        Objects.requireNonNull(stream, "stream");
    }
}
