package dev.sluice.flink.source.reader.push;

import java.util.List;
import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.throwable.ThrowableAnnotation;
import org.apache.flink.runtime.throwable.ThrowableType;

/**
 * PUSH was asked for and this process lacks what it needs. Restarting cannot fix a TaskManager's
 * configuration, so Flink is told not to restart the job (a {@code NonRecoverableError}, as its own
 * {@code SuppressRestartsException}): the job fails once, with the message that says what to set,
 * instead of failing the same way forever.
 */
@Internal
@ThrowableAnnotation(ThrowableType.NonRecoverableError)
public final class PushUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public PushUnavailableException(String socket, List<String> unmet) {
        super(
                "SluiceSource cannot read in PUSH mode through "
                        + socket
                        + "; it needs "
                        + String.join("; and ", unmet)
                        + ". Or read with ReadMode.AUTO, which falls back to PULL.");
    }
}
