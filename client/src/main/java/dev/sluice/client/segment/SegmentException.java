package dev.sluice.client.segment;

import dev.sluice.client.annotation.PublicEvolving;
import java.io.IOException;

/** A segment cannot be used any more by this side: its content, its writer or its lane failed. */
@PublicEvolving
public class SegmentException extends IOException {
    private static final long serialVersionUID = 1L;

    public SegmentException(String message) {
        super(message);
    }

    public SegmentException(String message, Throwable cause) {
        super(message, cause);
    }
}
