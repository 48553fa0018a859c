package dev.sluice.cluster;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * What a print head reports of one channel it printed, on the {@value #TOPIC} topic as JSON: the
 * checks compare it with a sequential run of the same job.
 *
 * @param job the job id
 * @param stream the channel's stream
 * @param host the host of the print head that read it
 * @param bytes bytes received
 * @param chunks chunks received, each in {@code seq} order, once
 * @param sha256 the SHA-256 of the bytes, hex; empty when {@code error} is set
 * @param starvationEvents chunks not there at their due time
 * @param bytesPerSecond the rate the stream was read at
 * @param latenessP99Millis the 99th percentile of the chunks' lateness against their due time
 * @param error why the channel failed (out of order, short, timed out); null when it did not
 */
public record Printed(
        String job,
        String stream,
        String host,
        long bytes,
        long chunks,
        String sha256,
        long starvationEvents,
        double bytesPerSecond,
        double latenessP99Millis,
        String error) {

    public static final String TOPIC = "sluice-demo-printed";

    private static final ObjectMapper JSON = new ObjectMapper();

    public byte[] toJson() {
        try {
            return JSON.writeValueAsBytes(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a record of strings and numbers always encodes", e);
        }
    }

    public static Printed fromJson(byte[] json) {
        try {
            return JSON.readValue(json, Printed.class);
        } catch (IOException e) {
            throw new UncheckedIOException("not a print head's report", e);
        }
    }
}
