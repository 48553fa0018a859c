package dev.sluice.client.read;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.brokerd.ChunkBatch;
import dev.sluice.client.brokerd.ChunkSubscription;
import dev.sluice.client.brokerd.SubscriptionRequest;
import dev.sluice.client.protocol.StartPosition;
import dev.sluice.client.protocol.StreamGap;
import dev.sluice.client.shared.SharedBatch;
import dev.sluice.client.shared.SharedSubscription;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.arrow.vector.VarBinaryVector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One CHUNK_STREAMS subscription shared by the {@link StreamReader}s of one job and chunk topic in
 * this process (docs/stream-reader.md, "One subscription per job and topic in a process"): the
 * daemon fetches the topic, orders the job's streams and copies each chunk into shared memory once,
 * not once per reader. Without it, the four readers of a print job's inks at one output location
 * made the broker serve every chunk four times.
 *
 * <p>The registry, the dispatcher thread and the counted shares of a batch are {@link
 * SharedSubscription}'s; this class routes: each chunk goes to the readers of its stream, and a
 * batch is closed once every reader that got one of its chunks is done with it. The readers advance
 * together within the segment: one that stops reading keeps its batches, and once they hold every
 * slot the others wait too (the daemon pauses), which is one subscription's backpressure.
 *
 * <p>A reader joins only while its stream has not been seen: the chunks handed out before it came
 * are gone, so a reader of a stream already under way gets a subscription of its own (not shared,
 * from the topic's start, as every reader's was before).
 *
 * <p>A paced reader holds its chunks until they are due, and the daemon fills the slots in the
 * order the streams' chunks come: the chunks of a stream that came early would hold every slot
 * while another stream's next chunk cannot get one, and its reader starves though the data is
 * there. So a chunk handed to a paced reader that already has one waiting is copied to the heap and
 * its slot share is given back at once, up to {@code heapBufferBytes} per subscription, into
 * buffers that are reused rather than collected ({@link HeapChunkPool}); the chunk a reader will
 * read next stays in place.
 *
 * <p>The daemon's reports of a hole in a stream (STREAM_GAP) go to every reader of that stream, in
 * its inbox after the chunks handed out before: each of them waits at the hole, whatever its share
 * of the stream ({@link ChunkDelivery} tells it when it gets there). The readers of the job's other
 * streams are not told.
 *
 * <p>When the daemon subscription is renewed after the daemon went away ({@link
 * ChunkSubscription#resubscriptions()}), every reader of it is told, whatever its stream: the
 * chunks the daemon had taken from local producers and not yet delivered are lost, and each reader
 * says so in its next progress record (docs/formats.md, "Delivery progress", {@code RESUBSCRIBED}).
 *
 * <p>Readers share a subscription when everything it asks the daemon for is the same ({@link Key}).
 * The dispatcher ends, and the subscription leaves the process's registry, when its last reader
 * leaves; that reader's close returns once it has (docs/architecture.md, "Threads").
 */
final class SharedChunkSubscription
        extends SharedSubscription<SharedChunkSubscription.Key, ChunkBatch> {
    private static final Logger LOG = LoggerFactory.getLogger(SharedChunkSubscription.class);
    // How long the dispatcher waits in one poll: the thread wakes this often when the topic is
    // quiet, and hands out the holes reported meanwhile.
    private static final Duration POLL = Duration.ofMillis(5);

    /**
     * What makes readers share a subscription: the daemon, everything the request asks for (the
     * topic, the job, the partitions, the slots, the reorder window) and the heap buffer.
     *
     * @param partitions the partitions 0 to {@code partitions - 1}; 0 for the colocated leaders of
     *     the daemon's broker
     */
    record Key(
            BrokerdClient brokerd,
            String topic,
            String job,
            int partitions,
            int slotCount,
            long slotSize,
            long reorderWindowBytes,
            long heapBufferBytes) {

        /** The CHUNK_STREAMS request; every slot may hold a batch some reader still reads. */
        SubscriptionRequest request() {
            SubscriptionRequest.Builder request =
                    SubscriptionRequest.builder(topic)
                            .chunkStreams(job)
                            .slots(slotCount, slotSize)
                            .maxOpenBatches(slotCount)
                            .reorderWindowBytes(reorderWindowBytes);
            if (partitions == 0) {
                request.localLeaders();
            } else {
                request.partitions(partitions, StartPosition.EARLIEST);
            }
            return request.build();
        }
    }

    private final ChunkSubscription subscription;
    private final HeapChunkPool heapChunks;
    // Guarded by this.
    private final Map<String, List<Member>> members = new HashMap<>();
    // Streams whose chunks were handed out, or passed over for want of a reader.
    private final Set<String> seen = new HashSet<>();
    // The dispatcher's own: the subscription's renewals the readers were told of.
    private int renewalsTold;

    private SharedChunkSubscription(Key key, ChunkSubscription subscription) {
        super(key, "sluice-chunks-" + key.topic(), key.slotCount(), POLL);
        this.subscription = subscription;
        this.heapChunks = new HeapChunkPool(key.heapBufferBytes());
    }

    /**
     * A source of {@code stream}'s chunks from the shared subscription of {@code key}, opening it
     * if there is none or if the stream is already under way in it. A {@code paced} reader's
     * waiting chunks may be copied to the heap. {@code renewed} runs on the subscription's thread
     * after each renewal of the daemon subscription from then on; it must not block.
     */
    static ChunkSource join(Key key, String stream, boolean paced, Runnable renewed)
            throws IOException {
        return join(
                key,
                k -> new SharedChunkSubscription(k, k.brokerd().subscribeChunks(k.request())),
                (SharedChunkSubscription shared) -> shared.tryAdd(stream, paced, renewed));
    }

    /** Shared subscriptions open in this process; for tests. */
    static int openCount() {
        return openCount(Key.class);
    }

    /** A new reader of {@code stream}, or null if its chunks were handed out already. */
    private synchronized Member tryAdd(String stream, boolean paced, Runnable renewed) {
        if (seen.contains(stream)) {
            return null;
        }
        Member member = new Member(stream, paced, renewed);
        members.computeIfAbsent(stream, s -> new ArrayList<>()).add(member);
        return member;
    }

    /** Takes the reader out of the routing and gives back what its inbox still holds. */
    private void detach(Member member) {
        synchronized (this) {
            List<Member> ofStream = members.get(member.stream);
            ofStream.remove(member);
            if (ofStream.isEmpty()) {
                members.remove(member.stream);
            }
        }
        for (Entry entry; (entry = member.inbox.poll()) != null; ) {
            if (entry instanceof Held row) {
                row.done();
            }
        }
    }

    /**
     * Hands out the holes reported since the last poll, after the chunks polled before them, and
     * tells the readers when the poll renewed the subscription.
     */
    @Override
    protected ChunkBatch poll(Duration timeout) throws IOException {
        handOutGaps();
        ChunkBatch batch = subscription.poll(timeout);
        tellRenewals();
        return batch;
    }

    /** Tells every reader, once, that the subscription was renewed since the last poll. */
    private void tellRenewals() {
        int renewals = subscription.resubscriptions();
        if (renewals == renewalsTold) {
            return;
        }
        renewalsTold = renewals;
        List<Member> readers;
        synchronized (this) {
            readers = members.values().stream().flatMap(List::stream).toList();
        }
        readers.forEach(member -> member.renewed.run());
    }

    @Override
    protected void closeSubscription() {
        try {
            subscription.close();
        } catch (IOException e) {
            LOG.warn("closing the chunk subscription of {}", key(), e);
        }
    }

    /** Hands each chunk to the readers of its stream. */
    @Override
    protected synchronized void route(SharedBatch<ChunkBatch> shared) {
        ChunkBatch batch = shared.batch();
        // Readers with a chunk waiting: in their inbox, or earlier in this batch.
        Set<Member> waiting = new HashSet<>();
        for (int i = 0; i < batch.chunkCount(); i++) {
            String stream = batch.stream(i);
            seen.add(stream);
            for (Member member : members.getOrDefault(stream, List.of())) {
                Row row = new Row(shared, i);
                boolean behind = member.hasChunkWaiting() || !waiting.add(member);
                HeapChunk copy = member.paced && behind ? copy(row) : null;
                if (copy == null) {
                    shared.hold();
                    member.inbox.add(row);
                } else {
                    member.inbox.add(copy);
                }
            }
        }
    }

    /**
     * Puts each hole the daemon reported in the inboxes of its stream's readers. The subscription
     * reads one job, the reports' too.
     */
    private void handOutGaps() {
        for (StreamGap gap; (gap = subscription.nextGap()) != null; ) {
            GapReport report = new GapReport(gap);
            synchronized (this) {
                for (Member member : members.getOrDefault(gap.stream(), List.of())) {
                    member.inbox.add(report);
                }
            }
        }
    }

    /** A heap copy of {@code row}, or null when the heap buffer has no room for it. */
    private HeapChunk copy(Row row) {
        ByteBuffer bytes = heapChunks.take(row.size());
        if (bytes == null) {
            return null;
        }
        bytes.put(row.payload()).flip();
        return new HeapChunk(row.seq(), row.isEndOfStream(), bytes);
    }

    /** What a reader's inbox holds: its stream's chunks and the holes reported in it, in order. */
    private interface Entry {}

    /** A hole the daemon reported in the reader's stream. */
    private record GapReport(StreamGap gap) implements Entry {}

    /** A chunk in a reader's inbox: given back once, which cannot fail. */
    private abstract static class Held implements ChunkSource.Chunk, Entry {
        private final long seq;
        private final boolean eos;
        private final AtomicBoolean done = new AtomicBoolean();

        Held(long seq, boolean eos) {
            this.seq = seq;
            this.eos = eos;
        }

        @Override
        public final long seq() {
            return seq;
        }

        @Override
        public final boolean isEndOfStream() {
            return eos;
        }

        @Override
        public final void done() {
            if (done.compareAndSet(false, true)) {
                giveBack();
            }
        }

        abstract void giveBack();
    }

    /** One reader's view: its stream's chunks, in the order the daemon put them. */
    private final class Member implements ChunkSource {
        final String stream;
        final boolean paced;
        final Runnable renewed;
        final LinkedBlockingQueue<Entry> inbox = new LinkedBlockingQueue<>();
        // Handed out, not yet done: done on close, so that the others get its slot back.
        private Held current;
        // Reports next() came upon, for takeGap(): the reader's thread alone uses them.
        private final ArrayDeque<StreamGap> gaps = new ArrayDeque<>();
        private boolean closed;

        Member(String stream, boolean paced, Runnable renewed) {
            this.stream = stream;
            this.paced = paced;
            this.renewed = renewed;
        }

        /** Whether a chunk waits in the inbox (a gap report alone is none). */
        boolean hasChunkWaiting() {
            return inbox.stream().anyMatch(Held.class::isInstance);
        }

        @Override
        public Chunk next(long timeoutNanos) throws IOException {
            Entry entry;
            try {
                entry =
                        timeoutNanos <= 0
                                ? inbox.poll()
                                : inbox.poll(timeoutNanos, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while waiting for a chunk", e);
            }
            if (entry instanceof GapReport report) {
                gaps.add(report.gap());
                return null;
            }
            Throwable failure = failure();
            if (entry == null && failure != null) {
                throw new IOException("the subscription ended: " + failure.getMessage(), failure);
            }
            current = (Held) entry;
            return current;
        }

        @Override
        public StreamGap takeGap() {
            return gaps.poll();
        }

        @Override
        public long bytesWaiting(int readerIndex, int readerCount) {
            long bytes = 0;
            // A chunk in the inbox is not done, so its batch is open and its size readable.
            for (Entry entry : inbox) {
                if (entry instanceof Held chunk
                        && Long.remainderUnsigned(chunk.seq(), readerCount) == readerIndex) {
                    bytes += chunk.size();
                }
            }
            return bytes;
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                if (current != null) {
                    current.done();
                }
                leave(() -> detach(this));
            }
        }
    }

    /** One chunk of a shared batch, for one reader. */
    private static final class Row extends Held {
        private final SharedBatch<ChunkBatch> owner;
        private final int i;

        Row(SharedBatch<ChunkBatch> owner, int i) {
            super(owner.batch().seq(i), owner.batch().isEndOfStream(i));
            this.owner = owner;
            this.i = i;
        }

        @Override
        public ByteBuffer payload() {
            VarBinaryVector payloads = (VarBinaryVector) owner.batch().root().getVector("payload");
            int row = owner.batch().row(i);
            int start = payloads.getStartOffset(row);
            // The slot's memory itself: a direct buffer over the mapped segment, no copy.
            return payloads.getDataBuffer()
                    .nioBuffer(start, payloads.getEndOffset(row) - start)
                    .asReadOnlyBuffer();
        }

        @Override
        public int size() {
            VarBinaryVector payloads = (VarBinaryVector) owner.batch().root().getVector("payload");
            int row = owner.batch().row(i);
            return payloads.getEndOffset(row) - payloads.getStartOffset(row);
        }

        @Override
        void giveBack() {
            owner.release();
        }
    }

    /**
     * A chunk copied out of its slot into a buffer of the pool, whose share of the slot was given
     * back when it was copied.
     */
    private final class HeapChunk extends Held {
        private final ByteBuffer buffer;

        HeapChunk(long seq, boolean eos, ByteBuffer buffer) {
            super(seq, eos);
            this.buffer = buffer;
        }

        @Override
        public ByteBuffer payload() {
            return buffer.asReadOnlyBuffer();
        }

        @Override
        public int size() {
            return buffer.limit();
        }

        @Override
        void giveBack() {
            heapChunks.giveBack(buffer);
        }
    }
}
