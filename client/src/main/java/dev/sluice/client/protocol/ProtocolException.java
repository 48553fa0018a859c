package dev.sluice.client.protocol;

import dev.sluice.client.annotation.Internal;
import java.io.IOException;

/**
 * A control frame breaks the format. The message reads {@code field = value: expectation}, the
 * field named as {@code docs/formats.md} spells it (a partition entry as {@code
 * partitions[2].start}), the same form the C++ codec uses.
 */
@Internal
public class ProtocolException extends IOException {
    private static final long serialVersionUID = 1L;

    private final String field;

    public ProtocolException(String field, Object value, String expectation) {
        super(field + " = " + value + ": " + expectation);
        this.field = field;
    }

    /** The spec's name of the offending field, for example {@code frame_length}. */
    public String field() {
        return field;
    }
}
