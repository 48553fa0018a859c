package dev.sluice.client.segment;

import dev.sluice.client.annotation.PublicEvolving;

/**
 * The writer took this reader's lane back (its heartbeat looked stale, typically after a long
 * pause). Objects still held may have been overwritten; the reader must reopen the segment.
 */
@PublicEvolving
public class ReaderEvictedException extends SegmentException {
    private static final long serialVersionUID = 1L;

    public ReaderEvictedException(String message) {
        super(message);
    }
}
