package dev.sluice.client.segment;

import dev.sluice.client.annotation.PublicEvolving;

/**
 * The writer's heartbeat went stale while the reader had nothing left to read: the writer died or
 * hangs, and no more objects will come from this segment.
 */
@PublicEvolving
public class WriterDeadException extends SegmentException {
    private static final long serialVersionUID = 1L;

    public WriterDeadException(String message) {
        super(message);
    }
}
