package dev.sluice.client.brokerd;

import dev.sluice.client.annotation.PublicEvolving;
import dev.sluice.client.protocol.ErrorCode;
import java.io.IOException;

/** The daemon refused a request or ended a subscription: its ERROR code and message. */
@PublicEvolving
public class BrokerdException extends IOException {
    private static final long serialVersionUID = 1L;
    private final ErrorCode code;
    private final String daemonMessage;

    public BrokerdException(ErrorCode code, String message) {
        this(code, message, "");
    }

    /** {@code hint}: what the reader's user can do about it, after the daemon's own words. */
    BrokerdException(ErrorCode code, String message, String hint) {
        super(code + ": " + message + hint);
        this.code = code;
        this.daemonMessage = message;
    }

    public ErrorCode code() {
        return code;
    }

    /** The ERROR's message as the daemon sent it. */
    public String daemonMessage() {
        return daemonMessage;
    }
}
