package dev.sluice.client.protocol;

import dev.sluice.client.annotation.Internal;
import java.util.Objects;

/**
 * ERROR from the daemon: about {@code subscriptionId} (0: the connection, or a SUBSCRIBE that
 * failed), with the protocol versions the daemon speaks and a message for people.
 */
@Internal
public record ErrorMessage(
        long subscriptionId, ErrorCode code, int minVersion, int maxVersion, String message)
        implements ControlMessage {
    public ErrorMessage {
        Objects.requireNonNull(code, "code");
        Objects.requireNonNull(message, "message");
    }

    @Override
    public MessageType type() {
        return MessageType.ERROR;
    }
}
