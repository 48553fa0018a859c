package dev.sluice.client.brokerd;

import dev.sluice.client.annotation.PublicEvolving;
import dev.sluice.client.protocol.Mode;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Subscribes to {@code sluice-brokerd} on this host, and hands it producer segments ({@link
 * #produce}). Each subscription and each producer has a control connection of its own, so one's
 * failure or restart never disturbs another.
 *
 * <pre>{@code
 * BrokerdClient client = BrokerdClient.builder(Path.of("/run/sluice/brokerd.sock")).build();
 * try (RecordsSubscription orders =
 *         client.subscribe(SubscriptionRequest.builder("orders").partitions(8, EARLIEST).build())) {
 *     while (running) {
 *         try (RecordBatch batch = orders.poll(Duration.ofSeconds(1))) {
 *             if (batch != null) {
 *                 process(batch.root());
 *             }
 *         }
 *     }
 * }
 * }</pre>
 */
@PublicEvolving
public final class BrokerdClient {
    private final Path socket;
    private final Duration heartbeatTimeout;
    private final Duration requestTimeout;
    private final Duration reconnectTimeout;

    private BrokerdClient(Builder builder) {
        this.socket = builder.socket;
        this.heartbeatTimeout = builder.heartbeatTimeout;
        this.requestTimeout = builder.requestTimeout;
        this.reconnectTimeout = builder.reconnectTimeout;
    }

    public static Builder builder(Path socket) {
        return new Builder(socket);
    }

    /**
     * Subscribes and maps the subscription's segment.
     *
     * @throws BrokerdException when the daemon refuses (NOT_AUTHORIZED, UNKNOWN_TOPIC, ...)
     * @throws IOException when the daemon cannot be reached
     */
    public RecordsSubscription subscribe(SubscriptionRequest request) throws IOException {
        if (request.mode() != Mode.RECORDS) {
            throw new IllegalArgumentException("a chunkStreams() request: use subscribeChunks");
        }
        return new RecordsSubscription(this, request);
    }

    /** Subscribes in CHUNK_STREAMS mode; see {@link ChunkSubscription}. */
    public ChunkSubscription subscribeChunks(SubscriptionRequest request) throws IOException {
        if (request.mode() != Mode.CHUNK_STREAMS) {
            throw new IllegalArgumentException("not a chunkStreams() request: use subscribe");
        }
        return new ChunkSubscription(this, request);
    }

    /**
     * Hands the daemon a producer segment of chunks for {@code topic}'s CHUNK_STREAMS subscriptions
     * (docs/formats.md, "PRODUCE"): the caller created it (object kind CHUNKS) and is its writer.
     * The daemon opens it only if it is a regular file of this process's user.
     *
     * @param topic the chunk topic, {@code sluice.chunks.<outputLocation>}
     * @param segmentPath the segment's absolute path
     * @throws BrokerdException when the daemon refuses (NOT_AUTHORIZED, BAD_REQUEST naming why)
     * @throws IOException when the daemon cannot be reached
     */
    public LocalProducerRegistration produce(String topic, Path segmentPath) throws IOException {
        Objects.requireNonNull(topic, "topic");
        if (!segmentPath.isAbsolute()) {
            throw new IllegalArgumentException(
                    "segment path " + segmentPath + ": not absolute, the daemon resolves no other");
        }
        return LocalProducerRegistration.register(this, topic, segmentPath);
    }

    /** The daemon's control socket. */
    public Path socket() {
        return socket;
    }

    ControlConnection connect() throws IOException {
        return ControlConnection.open(socket, heartbeatTimeout);
    }

    Duration requestTimeout() {
        return requestTimeout;
    }

    Duration reconnectTimeout() {
        return reconnectTimeout;
    }

    /** Builds a client; {@link #build()} checks the settings. */
    @PublicEvolving
    public static final class Builder {
        private final Path socket;
        private Duration heartbeatTimeout = Duration.ofSeconds(10);
        private Duration requestTimeout = Duration.ofSeconds(30);
        private Duration reconnectTimeout = Duration.ofSeconds(60);

        private Builder(Path socket) {
            this.socket = Objects.requireNonNull(socket, "socket");
        }

        /** How long the daemon may stay silent before the connection is given up. */
        public Builder heartbeatTimeout(Duration timeout) {
            this.heartbeatTimeout = Objects.requireNonNull(timeout);
            return this;
        }

        /** How long a SUBSCRIBE may wait for its answer (the daemon reads cluster metadata). */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = Objects.requireNonNull(timeout);
            return this;
        }

        /** How long a subscription keeps trying to come back after the daemon went away. */
        public Builder reconnectTimeout(Duration timeout) {
            this.reconnectTimeout = Objects.requireNonNull(timeout);
            return this;
        }

        public BrokerdClient build() {
            for (Duration d : new Duration[] {heartbeatTimeout, requestTimeout, reconnectTimeout}) {
                if (d.isNegative() || d.isZero()) {
                    throw new IllegalArgumentException("timeouts must be positive: " + d);
                }
            }
            if (heartbeatTimeout.toMillis() < 40) {
                throw new IllegalArgumentException(
                        "heartbeat timeout " + heartbeatTimeout + ": at least 40 ms");
            }
            return new BrokerdClient(this);
        }
    }
}
