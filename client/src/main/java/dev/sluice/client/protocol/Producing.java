package dev.sluice.client.protocol;

import dev.sluice.client.annotation.Internal;

/**
 * PRODUCING (version 4 on, sent by the daemon): the answer to a {@link Produce}. The daemon has
 * attached a lane of the producer's segment and reads its chunks; {@link Close} with {@code
 * producerId} (unsigned, ≥ 1, from the counter of the subscription ids) ends it, after the daemon
 * took the objects already published.
 */
@Internal
public record Producing(long producerId) implements ControlMessage {
    @Override
    public MessageType type() {
        return MessageType.PRODUCING;
    }
}
