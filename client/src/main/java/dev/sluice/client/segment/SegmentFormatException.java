package dev.sluice.client.segment;

import dev.sluice.client.annotation.PublicEvolving;

/**
 * The bytes of a segment break the format: a header field, a ring entry, a slot descriptor or the
 * Arrow message in a slot. The message always names the field (as {@code docs/formats.md} spells
 * it) and the value found, so a report from the field can be matched to the spec.
 */
@PublicEvolving
public class SegmentFormatException extends SegmentException {
    private static final long serialVersionUID = 1L;

    private final String field;

    public SegmentFormatException(String field, Object value, String expectation) {
        super(field + " = " + value + ": " + expectation);
        this.field = field;
    }

    public SegmentFormatException(String field, Object value, String expectation, Throwable cause) {
        super(field + " = " + value + ": " + expectation, cause);
        this.field = field;
    }

    /** The spec's name of the offending field, for example {@code slot_size}. */
    public String field() {
        return field;
    }
}
