package dev.sluice.client.brokerd;

import dev.sluice.client.protocol.ControlCodec;
import dev.sluice.client.protocol.ControlMessage;
import dev.sluice.client.protocol.ErrorMessage;
import dev.sluice.client.protocol.Frame;
import dev.sluice.client.protocol.FrameReader;
import dev.sluice.client.protocol.Heartbeat;
import dev.sluice.client.protocol.StreamGap;
import dev.sluice.client.thread.SluiceThreads;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One control connection to the daemon: sends requests and matches their answers by request id,
 * exchanges heartbeats, and closes itself when the daemon is silent past the timeout. One thread
 * blocks reading frames; another sends heartbeats; neither spins. Both end when the connection
 * closes, and {@link #close()} returns once they have (docs/architecture.md, "Threads").
 */
final class ControlConnection implements AutoCloseable {
    private final SocketChannel channel;
    private final long timeoutNanos;
    private final Map<Long, CompletableFuture<ControlMessage>> pending = new ConcurrentHashMap<>();
    private final AtomicLong nextRequestId = new AtomicLong(1);
    private final ScheduledExecutorService heartbeats;
    private final SluiceThreads.Factory heartbeatThreads;
    private final Thread reader;
    private volatile long lastReceivedNanos = System.nanoTime();
    private volatile long lastSentNanos = System.nanoTime();
    private volatile long peerTimeoutNanos;
    private volatile IOException failure;
    // An ERROR about a running subscription, which ends it.
    private volatile ErrorMessage subscriptionError;
    // STREAM_GAPs, which answer no request: taken by the subscription's polling thread.
    private final Queue<StreamGap> streamGaps = new ConcurrentLinkedQueue<>();
    // For those who must learn at once, not at their next poll, that the connection or what it
    // serves ended: a local producer's channel (docs/formats.md, "PRODUCE").
    private final CompletableFuture<IOException> ended = new CompletableFuture<>();
    private final CompletableFuture<ErrorMessage> firstSubscriptionError =
            new CompletableFuture<>();

    private static final long READER_DRAIN_MILLIS = 1000;
    // How long close() waits for the two threads; both end at once when the socket closes.
    private static final Duration THREADS_END = Duration.ofSeconds(5);

    private ControlConnection(SocketChannel channel, Duration timeout) {
        this.channel = channel;
        this.reader = SluiceThreads.newThread("sluice-brokerd-control", this::readFrames);
        this.timeoutNanos = timeout.toNanos();
        this.heartbeatThreads = SluiceThreads.factory("sluice-brokerd-heartbeat");
        this.heartbeats = new ScheduledThreadPoolExecutor(1, heartbeatThreads);
    }

    static ControlConnection open(Path socket, Duration timeout) throws IOException {
        SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            channel.connect(UnixDomainSocketAddress.of(socket));
        } catch (IOException e) {
            channel.close();
            throw new BrokerdUnreachableException(socket, e);
        }
        ControlConnection connection = new ControlConnection(channel, timeout);
        // Scheduled before the reader starts: a daemon that refuses this peer answers and closes
        // at once, and the reader thread, ending the connection, shuts the scheduler down; a
        // schedule after that is rejected, an unchecked exception in place of the daemon's reason.
        long period = Math.max(10, timeout.toMillis() / 20);
        connection.heartbeats.scheduleWithFixedDelay(
                connection::beat, period, period, TimeUnit.MILLISECONDS);
        connection.reader.start();
        // The first heartbeat tells the daemon how soon this side gives up on a silent peer.
        connection.send(new Heartbeat(System.nanoTime(), connection.timeoutNanos));
        return connection;
    }

    /** Sends a request; the future completes with its answer, or with a BrokerdException. */
    CompletableFuture<ControlMessage> request(ControlMessage message) throws IOException {
        long id = nextRequestId.getAndIncrement();
        CompletableFuture<ControlMessage> answer = new CompletableFuture<>();
        pending.put(id, answer);
        try {
            write(new Frame(id, message));
        } catch (IOException e) {
            pending.remove(id);
            throw e;
        }
        return answer;
    }

    /** Sends a message nothing answers but a refusal, which ends up in {@link #failure()}. */
    void send(ControlMessage message) throws IOException {
        write(new Frame(nextRequestId.getAndIncrement(), message));
    }

    boolean isOpen() {
        return failure == null;
    }

    /** Why the connection ended; null while it is open. */
    IOException failure() {
        return failure;
    }

    /** The ERROR that ended a subscription of this connection, if one came. */
    ErrorMessage subscriptionError() {
        return subscriptionError;
    }

    /**
     * Completes with why the connection ended, once it has: the daemon closed it or went silent, or
     * {@link #close()} was called. Its callbacks run on the thread that saw the end, holding no
     * lock of this connection.
     */
    CompletableFuture<IOException> ended() {
        return ended;
    }

    /** Completes with the first ERROR that named a subscription (or a producer) of this one. */
    CompletableFuture<ErrorMessage> firstSubscriptionError() {
        return firstSubscriptionError;
    }

    /**
     * The oldest STREAM_GAP the daemon sent on this connection and nobody took yet, null if none
     * (docs/formats.md, "STREAM_GAP").
     */
    StreamGap nextStreamGap() {
        return streamGaps.poll();
    }

    private void write(Frame frame) throws IOException {
        try {
            writeLocked(frame);
        } catch (IOException e) {
            // A daemon that refuses a peer answers, then closes at once: the write may fail first,
            // while its reason waits in the receive buffer. Let the reader thread get to it.
            try {
                reader.join(READER_DRAIN_MILLIS);
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
            }
            IOException reason = failure;
            if (reason instanceof BrokerdException) {
                throw reason;
            }
            fail(e);
            throw e;
        }
    }

    private synchronized void writeLocked(Frame frame) throws IOException {
        if (failure != null) {
            throw failure;
        }
        ByteBuffer bytes = ByteBuffer.wrap(ControlCodec.encode(frame));
        while (bytes.hasRemaining()) {
            channel.write(bytes);
        }
        lastSentNanos = System.nanoTime();
    }

    private void readFrames() {
        FrameReader frames = new FrameReader(channel);
        try {
            for (Frame frame; (frame = frames.read()) != null; ) {
                lastReceivedNanos = System.nanoTime();
                dispatch(frame);
            }
            fail(new IOException("the daemon closed the connection"));
        } catch (IOException e) {
            fail(e);
        }
    }

    private void dispatch(Frame frame) {
        ControlMessage message = frame.message();
        if (message instanceof Heartbeat heartbeat) {
            peerTimeoutNanos = heartbeat.timeoutNs();
            return;
        }
        if (message instanceof StreamGap gap) {
            // Request id 0, answering nothing: news about the subscription, which takes it.
            streamGaps.add(gap);
            return;
        }
        CompletableFuture<ControlMessage> answer = pending.remove(frame.requestId());
        if (message instanceof ErrorMessage error) {
            BrokerdException exception = new BrokerdException(error.code(), error.message());
            if (answer != null) {
                answer.completeExceptionally(exception);
            } else if (error.subscriptionId() != 0) {
                subscriptionError = error;
                firstSubscriptionError.complete(error);
            } else {
                fail(exception);
            }
        } else if (answer != null) {
            answer.complete(message);
        }
    }

    private void beat() {
        long now = System.nanoTime();
        if (now - lastReceivedNanos > timeoutNanos) {
            fail(
                    new IOException(
                            "the daemon sent nothing for "
                                    + Duration.ofNanos(now - lastReceivedNanos).toMillis()
                                    + " ms"));
            return;
        }
        long peerTimeout = peerTimeoutNanos;
        if (peerTimeout > 0 && now - lastSentNanos >= peerTimeout / 4) {
            try {
                send(new Heartbeat(now, timeoutNanos));
            } catch (IOException e) {
                fail(e);
            }
        }
    }

    private void fail(IOException cause) {
        if (endLocked(cause)) {
            // Outside the lock: a callback may write to another connection, or take its own lock
            // while another thread holding it waits to write here.
            ended.complete(cause);
        }
    }

    /** Ends the connection; false when it had ended already. */
    private synchronized boolean endLocked(IOException cause) {
        if (failure != null) {
            return false;
        }
        failure = cause;
        pending.values().forEach(answer -> answer.completeExceptionally(cause));
        pending.clear();
        heartbeats.shutdown();
        try {
            channel.close();
        } catch (IOException ignored) {
            // Closing a socket that failed: nothing more to learn from it.
        }
        return true;
    }

    /** Closes the socket, then waits (briefly) until the reader and heartbeat threads ended. */
    @Override
    public void close() {
        fail(new IOException("closed"));
        try {
            heartbeatThreads.awaitEnd(THREADS_END);
            if (Thread.currentThread() != reader) {
                // An answer's callbacks run on the reader thread, which may close from there.
                reader.join(THREADS_END.toMillis());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
