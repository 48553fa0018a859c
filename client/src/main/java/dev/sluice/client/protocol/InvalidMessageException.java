package dev.sluice.client.protocol;

import dev.sluice.client.annotation.Internal;

/**
 * A message this side was asked to send breaks the format: the caller's bad argument, not a peer's
 * bad frame, which is a {@link ProtocolException}. The encoder applies the decoder's checks, so the
 * message reads as theirs, {@code field = value: expectation}.
 */
@Internal
public final class InvalidMessageException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String field;

    InvalidMessageException(ProtocolException refusal) {
        super(refusal.getMessage(), refusal);
        this.field = refusal.field();
    }

    /** The spec's name of the offending field, for example {@code topic}. */
    public String field() {
        return field;
    }
}
