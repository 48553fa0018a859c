package dev.sluice.client.brokerd;

import dev.sluice.client.annotation.PublicEvolving;
import java.io.IOException;

/**
 * The daemon made the subscription's segment, but this reader cannot open it: it does not see the
 * daemon's {@code sluice.segment.dir} as the daemon does (another host, another IPC namespace, no
 * permission), or the daemon is too old to name that folder. Subscribing again would not help.
 */
@PublicEvolving
public final class SegmentFolderException extends IOException {
    private static final long serialVersionUID = 1L;

    SegmentFolderException(String message, Throwable cause) {
        super(message, cause);
    }
}
