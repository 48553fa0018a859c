package dev.sluice.client.protocol;

import dev.sluice.client.annotation.Internal;

/** The body of a control frame: one of the protocol's nine messages. */
@Internal
public sealed interface ControlMessage
        permits Subscribe,
                Subscribed,
                Release,
                Heartbeat,
                ErrorMessage,
                Close,
                StreamGap,
                Produce,
                Producing {
    MessageType type();
}
