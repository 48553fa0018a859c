package dev.sluice.client.brokerd;

import dev.sluice.client.annotation.PublicEvolving;
import dev.sluice.client.protocol.ErrorCode;
import java.io.IOException;

/** The daemon refused a request or ended a subscription: its ERROR code and message. */
@PublicEvolving
public class BrokerdException extends IOException {
    private static final long serialVersionUID = 1L;
    private final ErrorCode code;

    public BrokerdException(ErrorCode code, String message) {
        super(code + ": " + message);
        this.code = code;
    }

    public ErrorCode code() {
        return code;
    }
}
