package dev.sluice.flink.source.reader.push;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.brokerd.BrokerdException;
import dev.sluice.client.brokerd.RecordBatch;
import dev.sluice.client.brokerd.RecordsSubscription;
import dev.sluice.client.brokerd.SubscriptionRequest;
import dev.sluice.client.protocol.ErrorCode;
import dev.sluice.client.protocol.PartitionStart;
import dev.sluice.client.thread.SluiceThreads;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one subscription to the local {@code sluice-brokerd} that all readers of a source share in a
 * TaskManager, per topic: one thread polls batches and routes each row to the reader that owns its
 * partition, zero-copy; a batch's slot is released when every reader recycled its share.
 *
 * <p>When readers gain or lose partitions, the hub stops polling, waits for every share to come
 * back (their rows live in the segment), and subscribes again for the new set of partitions, each
 * from the next offset it has not routed. Rows below that offset (a daemon restart re-delivers
 * some) are dropped, so each record reaches its reader once.
 *
 * <p>What readers buffer is bounded by the open batches ({@link PushSettings#maxOpenBatches()}):
 * when they are all held, the hub stops polling, the daemon's slots fill, and it pauses the
 * partitions.
 *
 * <p>The hub's thread ends, and the hub leaves the TaskManager's registry, when its last reader
 * leaves; that reader's close returns once the thread has ended (docs/architecture.md, "Threads"):
 * the thread holds the job's classes, and on a TaskManager that runs job after job it must not
 * outlive its job.
 */
final class PushHub {
    private static final Logger LOG = LoggerFactory.getLogger(PushHub.class);
    private static final Map<Key, PushHub> HUBS = new HashMap<>();
    private static final Duration POLL_TIMEOUT = Duration.ofMillis(20);
    private static final Duration METADATA_WAIT = Duration.ofSeconds(10);
    // How long the last reader's close waits for the thread: it ends within a poll once every
    // share is back, or a request to the daemon once that is answered.
    private static final Duration END_WAIT = Duration.ofSeconds(30);

    /** Hubs are per daemon, topic and source: two sources may read one partition from apart. */
    record Key(String socket, String topic, String sourceId) {}

    /** A polled batch and how many readers still hold a share of it. */
    static final class SharedBatch {
        final PushHub hub;
        final RecordBatch batch;
        int holders;

        SharedBatch(PushHub hub, RecordBatch batch) {
            this.hub = hub;
            this.batch = batch;
        }
    }

    private final Key key;
    private final PushSettings settings;
    private final BrokerdClient client;
    private final Thread thread;
    // Guarded by this.
    private final Set<PushMember> members = new HashSet<>();
    private PushMember[] owners = new PushMember[0];
    private long[] positions = new long[0];
    private boolean changed;
    private boolean stopping;
    private final ArrayDeque<SharedBatch> recycled = new ArrayDeque<>();
    // The hub thread's own.
    private RecordsSubscription subscription;
    private int open;

    private PushHub(Key key, PushSettings settings) {
        this.key = key;
        this.settings = settings;
        this.client = BrokerdClient.builder(Path.of(settings.socket())).build();
        this.thread = SluiceThreads.newThread("sluice-push-" + key.topic(), this::run);
    }

    /** Joins the hub of {@code key}, starting it if it is the first reader. */
    static PushMember join(Key key, PushSettings settings, PushInbox inbox) {
        synchronized (HUBS) {
            PushHub hub = HUBS.get(key);
            if (hub == null) {
                hub = new PushHub(key, settings);
                HUBS.put(key, hub);
                hub.thread.start();
            }
            PushMember member = new PushMember(hub, inbox);
            synchronized (hub) {
                hub.members.add(member);
            }
            return member;
        }
    }

    /**
     * The reader is gone: its partitions are dropped and its shares count as recycled. Only once
     * the reader no longer reads them: Flink closes a reader on its task thread.
     */
    static void leave(PushMember member) {
        PushHub hub = member.hub;
        boolean last;
        synchronized (HUBS) {
            synchronized (hub) {
                hub.members.remove(member);
                for (int p = 0; p < hub.owners.length; p++) {
                    if (hub.owners[p] == member) {
                        hub.owners[p] = null;
                        hub.changed = true;
                    }
                }
                member.takeHeld().forEach(hub::recycleLocked);
                last = hub.members.isEmpty();
                if (last) {
                    hub.stopping = true;
                    HUBS.remove(hub.key, hub);
                }
                hub.notifyAll();
            }
        }
        if (last) {
            hub.awaitEnd();
        }
    }

    /** Waits until the hub's thread has closed the subscription and ended. */
    private void awaitEnd() {
        try {
            thread.join(END_WAIT.toMillis());
        } catch (InterruptedException e) {
            // Flink interrupts a cancelled task's thread: the hub ends all the same, unawaited.
            Thread.currentThread().interrupt();
            return;
        }
        if (thread.isAlive()) {
            LOG.warn("the push thread of {} has not ended {} after its last reader", key, END_WAIT);
        }
    }

    /** From now on {@code member} gets {@code partition}'s rows, from {@code offset}. */
    synchronized void assign(PushMember member, int partition, long offset) {
        if (partition >= owners.length) {
            owners = Arrays.copyOf(owners, partition + 1);
            positions = Arrays.copyOf(positions, partition + 1);
        }
        owners[partition] = member;
        positions[partition] = offset;
        changed = true;
        notifyAll();
    }

    synchronized void unassign(PushMember member, int partition) {
        if (partition < owners.length && owners[partition] == member) {
            owners[partition] = null;
            changed = true;
            notifyAll();
        }
    }

    synchronized void recycle(PushedRecords records) {
        recycleLocked(records);
    }

    private void recycleLocked(PushedRecords records) {
        if (records.released) {
            return;
        }
        records.released = true;
        records.member.held.remove(records);
        if (--records.shared.holders == 0) {
            recycled.add(records.shared);
            notifyAll();
        }
    }

    private void run() {
        try {
            poll();
        } catch (Throwable e) {
            LOG.error("the push subscription to {} failed", key, e);
            failAll(e);
        }
        // Unmapping the segment under a reader still reading a share would crash the JVM: every
        // share comes back first, recycled or taken back when its reader leaves.
        try {
            while (open > 0) {
                closeRecycled(takeRecycled(true));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        closeSubscription();
    }

    private void poll() throws IOException, InterruptedException {
        while (true) {
            closeRecycled(takeRecycled(false));
            boolean stop;
            boolean resubscribe;
            synchronized (this) {
                stop = stopping;
                resubscribe = canResubscribe();
            }
            if (stop) {
                if (open == 0) {
                    return;
                }
            } else if (resubscribe) {
                resubscribe();
            } else if (canPoll()) {
                RecordBatch batch = subscription.poll(POLL_TIMEOUT);
                if (batch != null) {
                    open++;
                    route(batch);
                } else {
                    idle();
                }
            }
        }
    }

    /** The batches every holder recycled; waits for one, or for work when {@code !any}. */
    private synchronized ArrayDeque<SharedBatch> takeRecycled(boolean any)
            throws InterruptedException {
        while (recycled.isEmpty() && (any || (!stopping && !canResubscribe() && !canPoll()))) {
            wait();
        }
        ArrayDeque<SharedBatch> taken = new ArrayDeque<>(recycled);
        recycled.clear();
        return taken;
    }

    private void closeRecycled(ArrayDeque<SharedBatch> batches) {
        for (SharedBatch batch : batches) {
            try {
                batch.batch.close();
            } catch (IOException e) {
                LOG.warn("releasing a batch of {}", key, e);
            }
            open--;
        }
    }

    private boolean canResubscribe() {
        return changed && open == 0;
    }

    private boolean canPoll() {
        return subscription != null && !changed && open < settings.maxOpenBatches();
    }

    /**
     * Nothing came: wait a little for a recycle or a change. The subscription may return at once
     * while the daemon is away and batches are still held.
     */
    private synchronized void idle() throws InterruptedException {
        if (recycled.isEmpty() && !changed && !stopping) {
            wait(POLL_TIMEOUT.toMillis());
        }
    }

    /** Fails the readers; readers that join later get a new hub. */
    private void failAll(Throwable cause) {
        synchronized (HUBS) {
            HUBS.remove(key, this);
            synchronized (this) {
                members.forEach(member -> member.inbox.deliver(cause));
            }
        }
    }

    private void resubscribe() throws IOException, InterruptedException {
        closeSubscription();
        SubscriptionRequest.Builder request =
                SubscriptionRequest.builder(key.topic())
                        .slots(settings.slotCount(), settings.slotSize())
                        .maxOpenBatches(settings.maxOpenBatches())
                        .readUncommitted(settings.readUncommitted());
        int partitions = 0;
        synchronized (this) {
            for (int p = 0; p < owners.length; p++) {
                if (owners[p] != null) {
                    request.partition(PartitionStart.at(p, positions[p]));
                    partitions++;
                }
            }
            changed = false;
        }
        if (partitions > 0) {
            subscription = subscribe(request.build());
            if (subscription != null) {
                LOG.info("subscribed to {} for {} partitions", key, partitions);
            }
        }
    }

    /**
     * A topic or partition just created may not be in the broker's metadata yet, which the daemon
     * answers with UNKNOWN_TOPIC: asks again for a while before giving up. Null if the last reader
     * left meanwhile.
     */
    private RecordsSubscription subscribe(SubscriptionRequest request)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + METADATA_WAIT.toNanos();
        long backoffMillis = 50;
        while (true) {
            try {
                return client.subscribe(request);
            } catch (BrokerdException e) {
                if (e.code() != ErrorCode.UNKNOWN_TOPIC || System.nanoTime() > deadline) {
                    throw e;
                }
                LOG.info("{}: {}; asking again in {} ms", key, e.getMessage(), backoffMillis);
            }
            long wakeAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(backoffMillis);
            synchronized (this) {
                // Woken up when the last reader leaves, which must not wait out the backoff.
                for (long left; !stopping && (left = wakeAt - System.nanoTime()) > 0; ) {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                }
                if (stopping) {
                    return null;
                }
            }
            backoffMillis = Math.min(1000, backoffMillis * 2);
        }
    }

    private void closeSubscription() {
        if (subscription != null) {
            try {
                subscription.close();
            } catch (IOException e) {
                LOG.warn("closing the subscription to {}", key, e);
            }
            subscription = null;
        }
    }

    /** Hands each row to the reader owning its partition, once. */
    private void route(RecordBatch batch) throws IOException {
        SharedBatch shared = new SharedBatch(this, batch);
        Map<PushMember, PushedRecords> shares = new IdentityHashMap<>();
        PushMember lastOwner = null;
        PushedRecords lastShare = null;
        synchronized (this) {
            int rows = batch.rowCount();
            int end;
            // Run by run: the daemon writes a partition's records in offset order, in runs of
            // consecutive rows, so only a run's first and last offsets need reading.
            for (int start = 0; start < rows; start = end) {
                int partition = batch.partition(start);
                end = start + 1;
                while (end < rows && batch.partition(end) == partition) {
                    end++;
                }
                PushMember owner = partition < owners.length ? owners[partition] : null;
                if (owner == null) {
                    continue;
                }
                // Rows below the position come again after a daemon restart.
                int first = RowRuns.firstAtOrAfter(batch::offset, start, end, positions[partition]);
                if (first == end) {
                    continue;
                }
                positions[partition] = batch.offset(end - 1) + 1;
                if (owner != lastOwner) {
                    lastOwner = owner;
                    lastShare =
                            shares.computeIfAbsent(
                                    owner, m -> new PushedRecords(shared, key.topic(), m));
                }
                lastShare.add(partition, first, end);
            }
            shared.holders = shares.size();
            shares.forEach(
                    (member, records) -> {
                        member.held.add(records);
                        member.inbox.deliver(records);
                    });
        }
        if (shares.isEmpty()) {
            batch.close();
            open--;
        }
    }
}
