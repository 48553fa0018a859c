package dev.sluice.client.brokerd;

import dev.sluice.client.annotation.Internal;
import dev.sluice.client.protocol.Close;
import dev.sluice.client.protocol.ControlMessage;
import dev.sluice.client.protocol.Produce;
import dev.sluice.client.protocol.Producing;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A producer segment the daemon reads: what PRODUCE asked for and PRODUCING granted
 * (docs/formats.md, "PRODUCE"). The daemon takes the chunks published in the segment into the
 * CHUNK_STREAMS subscriptions of the topic until {@link #close()}, the end of this registration's
 * control connection, or the segment's writer closing it; in every case it first takes what was
 * published.
 *
 * <p>Like a subscription, a registration has a control connection of its own, so that the daemon
 * going away is told by that connection's end: {@link #ended()}.
 */
@Internal
public final class LocalProducerRegistration implements AutoCloseable {
    private final ControlConnection connection;
    private final long producerId;
    private final String topic;
    private final Path segmentPath;
    private final CompletableFuture<IOException> ended = new CompletableFuture<>();

    private LocalProducerRegistration(
            ControlConnection connection, long producerId, String topic, Path segmentPath) {
        this.connection = connection;
        this.producerId = producerId;
        this.topic = topic;
        this.segmentPath = segmentPath;
    }

    /** Sends PRODUCE on a connection of its own and waits for PRODUCING or ERROR. */
    static LocalProducerRegistration register(BrokerdClient client, String topic, Path segmentPath)
            throws IOException {
        ControlConnection connection = client.connect();
        try {
            ControlMessage answer =
                    connection
                            .request(new Produce(topic, segmentPath.toString()))
                            .get(client.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
            long id = ((Producing) answer).producerId();
            LocalProducerRegistration registration =
                    new LocalProducerRegistration(connection, id, topic, segmentPath);
            connection.ended().thenAccept(registration.ended::complete);
            connection
                    .firstSubscriptionError()
                    .thenAccept(
                            error -> {
                                if (error.subscriptionId() == id) {
                                    // The daemon ended the producer (a malformed object): the
                                    // connection has nothing left to serve.
                                    registration.ended.complete(
                                            new BrokerdException(error.code(), error.message()));
                                    connection.close();
                                }
                            });
            return registration;
        } catch (ExecutionException e) {
            connection.close();
            throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
        } catch (TimeoutException e) {
            connection.close();
            throw new IOException(
                    "no answer to PRODUCE of " + segmentPath + " in " + client.requestTimeout(), e);
        } catch (InterruptedException e) {
            connection.close();
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for PRODUCING");
        } catch (IOException | RuntimeException e) {
            connection.close();
            throw e;
        }
    }

    /** The id PRODUCING gave, unique for the daemon's lifetime. */
    public long producerId() {
        return producerId;
    }

    public String topic() {
        return topic;
    }

    public Path segmentPath() {
        return segmentPath;
    }

    /**
     * Completes with why the daemon stopped serving this producer: its connection ended (the daemon
     * went away or went silent), an ERROR naming the producer (a {@link BrokerdException}), or
     * {@link #close()}. Callbacks run on the thread that saw the end.
     */
    public CompletableFuture<IOException> ended() {
        return ended;
    }

    /** Whether the daemon still serves the producer, as far as this side knows. */
    public boolean isActive() {
        return !ended.isDone();
    }

    /** Sends CLOSE (the daemon takes what was published, then detaches) and ends the connection. */
    @Override
    public void close() {
        try {
            if (connection.isOpen()) {
                connection.send(new Close(producerId));
            }
        } catch (IOException e) {
            // The daemon is gone: the end of the connection says the same as CLOSE would.
        } finally {
            connection.close();
        }
    }
}
