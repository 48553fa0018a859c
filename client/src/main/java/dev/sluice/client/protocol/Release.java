package dev.sluice.client.protocol;

import dev.sluice.client.annotation.Internal;

/**
 * RELEASE: the commit watermark. The reader has processed every object it took up to segment {@code
 * object_id} {@code processedThrough} (inclusive, unsigned); the daemon may commit the offsets of
 * those objects that were also released in the segment.
 */
@Internal
public record Release(long subscriptionId, long processedThrough) implements ControlMessage {
    @Override
    public MessageType type() {
        return MessageType.RELEASE;
    }
}
