package dev.sluice.client.brokerd;

import dev.sluice.client.annotation.PublicEvolving;
import java.io.IOException;
import java.nio.file.Path;

/**
 * No daemon answers at the socket a client was given: none runs on this host, or it listens on
 * another path. Names the path and what to change, as the Python client does.
 */
@PublicEvolving
public final class BrokerdUnreachableException extends IOException {
    private static final long serialVersionUID = 1L;
    private final transient Path socket;

    BrokerdUnreachableException(Path socket, IOException cause) {
        super(
                "cannot connect to sluice-brokerd at "
                        + socket
                        + ": "
                        + cause.getMessage()
                        + "; start the daemon, or give the path of its socket (the daemon's"
                        + " --socket, sluice.socket)",
                cause);
        this.socket = socket;
    }

    /** The socket's path as the client was given it. */
    public Path socket() {
        return socket;
    }
}
