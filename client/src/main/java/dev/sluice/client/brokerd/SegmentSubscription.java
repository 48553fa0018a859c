package dev.sluice.client.brokerd;

import dev.sluice.client.protocol.Close;
import dev.sluice.client.protocol.ControlMessage;
import dev.sluice.client.protocol.ErrorCode;
import dev.sluice.client.protocol.ErrorMessage;
import dev.sluice.client.protocol.Release;
import dev.sluice.client.protocol.StreamGap;
import dev.sluice.client.protocol.StreamStart;
import dev.sluice.client.protocol.Subscribed;
import dev.sluice.client.segment.ArrowBatchReader;
import dev.sluice.client.segment.SegmentObject;
import dev.sluice.client.segment.SegmentReader;
import dev.sluice.client.segment.WriterDeadException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.FileSystemException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * What both kinds of subscription share: the control connection, the segment, the RELEASE
 * watermark, and resuming after the daemon went away.
 *
 * <p>When the daemon goes away (SIGTERM, SIGKILL, a lost connection) a subscription first hands out
 * what is still published in the old segment, which stays mapped, then connects again, with
 * backoff, and subscribes from where its subclass says it got to. An error that would come again
 * (an unknown topic, a record larger than a slot) ends it instead, with a {@link BrokerdException}.
 *
 * <p>Not thread-safe: one thread polls and closes batches. Up to {@link
 * SubscriptionRequest#maxOpenBatches()} batches may be open at once, each with vectors of its own;
 * a closed batch's vectors are reused by a later one.
 */
abstract class SegmentSubscription<B extends SegmentBatch> implements AutoCloseable {
    private final BrokerdClient client;
    private final SubscriptionRequest request;
    private final BufferAllocator allocator = new RootAllocator();
    private ControlConnection connection;
    private long subscriptionId;
    private List<Integer> assigned;
    private SegmentReader reader;
    // One loader per batch that may be open: a loader's vectors belong to one batch at a time.
    private final ArrayDeque<ArrowBatchReader> freeLoaders = new ArrayDeque<>();
    private final List<B> openBatches = new ArrayList<>();
    // RELEASE carries a watermark: every object up to it was processed.
    private long processedThrough = -1;
    private final TreeSet<Long> processedAhead = new TreeSet<>();
    private int resubscriptions;
    // drain(): the daemon was told to end the subscription; drained: every object it published
    // was handed out.
    private boolean draining;
    private boolean drained;
    private boolean closed;

    SegmentSubscription(BrokerdClient client, SubscriptionRequest request) {
        this.client = client;
        this.request = request;
    }

    /** Subclasses call this last in their constructor. */
    final void start() throws IOException {
        subscribe(false);
    }

    /** The batch to hand out for this object, or null when none of its rows is new. */
    abstract B wrap(SegmentObject object, ArrowBatchReader loader);

    /** Partition → offset to resume at, for the partitions this subscription has read. */
    abstract Map<Integer, Long> resumePositions();

    /** CHUNK_STREAMS: the streams to resume past the chunks handed out. */
    abstract List<StreamStart> resumeStreams();

    /** A batch was closed: its rows are processed. */
    abstract void closed(B batch);

    /**
     * The next batch, waiting up to {@code timeout}; null if none came. At most {@link
     * SubscriptionRequest#maxOpenBatches()} batches may be open: close one first.
     *
     * <p>After the daemon went away, the subscription resumes only once every open batch is closed
     * (their rows are in the old segment): until then it returns null.
     *
     * @throws BrokerdException when the daemon ended the subscription for good
     */
    public B poll(Duration timeout) throws IOException {
        if (closed) {
            throw new IllegalStateException("the subscription is closed");
        }
        if (freeLoaders.isEmpty()) {
            throw new IllegalStateException(
                    openBatches.size()
                            + " batches open, the request's maxOpenBatches: close one first");
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            SegmentObject object;
            // A dead connection means the segment will get no more objects: take what is there
            // without waiting, then resubscribe.
            boolean connected = connection.isOpen() && connection.subscriptionError() == null;
            long wait = connected ? Math.max(0, deadline - System.nanoTime()) : 0;
            try {
                object = reader.poll(Duration.ofNanos(wait));
            } catch (WriterDeadException e) {
                object = null;
                connected = false;
            }
            if (object != null) {
                ArrowBatchReader loader = freeLoaders.peek();
                loader.load(object);
                B batch = wrap(object, loader);
                if (batch == null) {
                    // Delivered before a resubscription: drop, and count as processed.
                    processed(object.objectId());
                    object.release();
                    continue;
                }
                freeLoaders.pop();
                openBatches.add(batch);
                return batch;
            }
            if (draining) {
                // Nothing more comes once the daemon closed the segment, or went away.
                drained = reader.isEndOfStream() || !connected;
                return null;
            }
            if (connected && !reader.isEndOfStream()) {
                return null;
            }
            if (!openBatches.isEmpty()) {
                return null;
            }
            ErrorMessage error = connection.subscriptionError();
            if (error != null && !resumable(error.code())) {
                throw new BrokerdException(error.code(), error.message());
            }
            resubscribe();
            if (System.nanoTime() >= deadline) {
                return null;
            }
        }
    }

    /**
     * Ends the subscription at the daemon (CLOSE) but keeps its segment: {@link #poll} goes on
     * handing out what the daemon had published into it, then returns null with {@link
     * #isDrained()} true, and never resubscribes. For a reader about to subscribe again with other
     * partitions: what the old subscription fetched reaches it, rather than being fetched again
     * (docs/flink-source.md, "Membership changes resubscribe"). The daemon commits no offset of the
     * batches handed out after this.
     */
    public void drain() {
        if (draining) {
            return;
        }
        draining = true;
        if (connection.isOpen()) {
            try {
                commitProcessed();
                connection.send(new Close(subscriptionId));
            } catch (IOException e) {
                // The connection failed: its end ends the subscription as CLOSE does, and poll
                // takes what the segment holds without waiting.
            }
        }
    }

    /** Whether, after {@link #drain()}, every object the daemon published was handed out. */
    public boolean isDrained() {
        return drained;
    }

    /** The partitions the daemon serves this subscription. */
    public List<Integer> partitions() {
        return assigned;
    }

    /** How many times the subscription was renewed after the daemon went away. */
    public int resubscriptions() {
        return resubscriptions;
    }

    /**
     * Tells the daemon every batch closed so far is processed: with a consumer group, it commits
     * their offsets.
     */
    public void commitProcessed() throws IOException {
        if (processedThrough >= 0 && connection.isOpen()) {
            connection.send(new Release(subscriptionId, processedThrough));
        }
    }

    /**
     * The oldest STREAM_GAP about this subscription not taken yet, null if none. A report on the
     * connection of an earlier subscription (before the daemon went away) is lost with it: the
     * daemon that serves the renewed one reports a hole that remains past its own timeout.
     */
    final StreamGap nextStreamGap() {
        for (StreamGap gap; (gap = connection.nextStreamGap()) != null; ) {
            if (gap.subscriptionId() == subscriptionId) {
                return gap;
            }
        }
        return null;
    }

    void released(B batch) {
        closed(batch);
        processed(batch.objectId());
        openBatches.remove(batch);
        freeLoaders.push(batch.loader());
    }

    private void processed(long id) {
        if (id == processedThrough + 1) {
            processedThrough = id;
            while (!processedAhead.isEmpty() && processedAhead.first() == processedThrough + 1) {
                processedThrough = processedAhead.pollFirst();
            }
        } else {
            processedAhead.add(id);
        }
    }

    private static boolean resumable(ErrorCode code) {
        return code == ErrorCode.SHUTTING_DOWN || code == ErrorCode.INTERNAL;
    }

    private void subscribe(boolean resuming) throws IOException {
        ControlConnection opened = client.connect();
        try {
            ControlMessage answer =
                    opened.request(request.toSubscribe(resumePositions(), resumeStreams()))
                            .get(client.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
            Subscribed subscribed = (Subscribed) answer;
            SegmentReader segment = openSegment(subscribed);
            if (reader != null) {
                reader.close();
                freeLoaders.forEach(ArrowBatchReader::close);
                freeLoaders.clear();
            }
            connection = opened;
            subscriptionId = subscribed.subscriptionId();
            assigned = List.copyOf(subscribed.partitions());
            reader = segment;
            for (int i = 0; i < request.maxOpenBatches(); i++) {
                freeLoaders.push(new ArrowBatchReader(reader.schema(), allocator));
            }
            processedThrough = -1;
            processedAhead.clear();
            if (resuming) {
                resubscriptions++;
            }
        } catch (ExecutionException e) {
            opened.close();
            if (e.getCause() instanceof BrokerdException refused
                    && refused.code() == ErrorCode.SUBSCRIPTION_LIMIT) {
                throw withRoomHint(refused);
            }
            throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
        } catch (TimeoutException e) {
            opened.close();
            throw new IOException("no answer to SUBSCRIBE in " + client.requestTimeout(), e);
        } catch (InterruptedException e) {
            opened.close();
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while subscribing");
        } catch (IOException | RuntimeException e) {
            opened.close();
            throw e;
        }
    }

    /**
     * The daemon says why it has no room (docs/brokerd.md, "Segment memory"); the reader's user
     * learns what this subscription asked for and which knobs give it room.
     */
    private BrokerdException withRoomHint(BrokerdException refused) {
        return new BrokerdException(
                refused.code(),
                refused.daemonMessage(),
                " (this subscription asked for "
                        + request.slotCount()
                        + " slots of "
                        + request.slotSize()
                        + " bytes, SubscriptionRequest.Builder.slots: ask for fewer or smaller"
                        + " slots, end other subscriptions to this daemon, or raise its"
                        + " sluice.segment.max.total.bytes or the size of its"
                        + " sluice.segment.dir)");
    }

    /**
     * Opens the segment in the folder the daemon names, its {@code sluice.segment.dir}
     * (SUBSCRIBED's {@code segment_dir}, spec "Versions"): only the daemon is configured with it. A
     * reader that cannot open the file does not see that folder as the daemon does, and is told so
     * with a {@link SegmentFolderException}.
     */
    private static SegmentReader openSegment(Subscribed subscribed) throws IOException {
        if (subscribed.segmentDir().isEmpty()) {
            throw new SegmentFolderException(
                    "the daemon answered SUBSCRIBE in protocol version 1, which does not name its"
                            + " segment folder (sluice.segment.dir): upgrade sluice-brokerd",
                    null);
        }
        Path path = Path.of(subscribed.segmentDir()).resolve(subscribed.segmentName());
        try {
            return SegmentReader.open(path);
        } catch (FileSystemException e) {
            throw new SegmentFolderException(
                    "cannot open the segment "
                            + path
                            + " that sluice-brokerd created in its sluice.segment.dir "
                            + subscribed.segmentDir()
                            + " ("
                            + e
                            + "): this reader must see that folder as the daemon does, on the"
                            + " daemon's host and, in a container, with the daemon's /dev/shm (the"
                            + " same IPC namespace) or the folder mounted",
                    e);
        }
    }

    private void resubscribe() throws IOException {
        connection.close();
        long deadline = System.nanoTime() + client.reconnectTimeout().toNanos();
        long backoffMillis = 10;
        while (true) {
            try {
                subscribe(true);
                return;
            } catch (BrokerdException e) {
                if (!resumable(e.code()) || System.nanoTime() > deadline) {
                    throw e;
                }
            } catch (IOException e) {
                if (System.nanoTime() > deadline) {
                    throw new IOException(
                            "the daemon did not come back within " + client.reconnectTimeout(), e);
                }
            }
            try {
                // Waiting for a daemon to restart: nothing to wake on but time.
                Thread.sleep(backoffMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while resubscribing");
            }
            backoffMillis = Math.min(1000, backoffMillis * 2);
        }
    }

    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            for (B batch : List.copyOf(openBatches)) {
                batch.close();
            }
            if (connection.isOpen() && !draining) {
                commitProcessed();
                connection.send(new Close(subscriptionId));
            }
        } finally {
            connection.close();
            reader.close();
            freeLoaders.forEach(ArrowBatchReader::close);
            allocator.close();
        }
    }
}
