package dev.sluice.client.protocol;

import dev.sluice.client.annotation.Internal;

/**
 * CLOSE: end one subscription or producer (its id), or with {@link #ALL} every subscription and
 * producer of the connection.
 */
@Internal
public record Close(long subscriptionId) implements ControlMessage {
    public static final long ALL = 0;

    @Override
    public MessageType type() {
        return MessageType.CLOSE;
    }
}
