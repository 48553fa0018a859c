package dev.sluice.flink.source.reader.push;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.brokerd.BrokerdException;
import dev.sluice.client.brokerd.RecordBatch;
import dev.sluice.client.brokerd.RecordsSubscription;
import dev.sluice.client.brokerd.SubscriptionRequest;
import dev.sluice.client.protocol.ErrorCode;
import dev.sluice.client.protocol.PartitionStart;
import dev.sluice.client.shared.SharedBatch;
import dev.sluice.client.shared.SharedSubscription;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.BitSet;
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
 * partition, zero-copy; a batch's slot is released when every reader recycled its share. The
 * registry, the thread and the counted shares are {@link SharedSubscription}'s; this class routes
 * and resubscribes.
 *
 * <p>When readers gain or lose partitions, the shared subscription ends its daemon subscription,
 * routes what the daemon had published into the segment (so it is not fetched again), waits for
 * every share to come back (their rows live in the segment), and subscribes again for the new set
 * of partitions, each from the next offset it has not routed. Rows below that offset (a daemon
 * restart re-delivers some) are dropped, so each record reaches its reader once; so are the old
 * subscription's rows of a partition given a new start meanwhile, which the new one reads from
 * there.
 *
 * <p>What readers buffer is bounded by the open batches ({@link PushSettings#maxOpenBatches()}):
 * when they are all held, the shared subscription stops polling, the daemon's slots fill, and it
 * pauses the partitions.
 *
 * <p>The shared subscription's thread ends, and the shared subscription leaves the registry, when
 * its last reader leaves; that reader's close returns once the thread has ended
 * (docs/architecture.md, "Threads"): the thread holds the job's classes, and on a TaskManager that
 * runs job after job it must not outlive its job.
 */
final class SharedRecordsSubscription
        extends SharedSubscription<SharedRecordsSubscription.Key, RecordBatch> {
    private static final Logger LOG = LoggerFactory.getLogger(SharedRecordsSubscription.class);
    private static final Duration POLL_TIMEOUT = Duration.ofMillis(20);
    private static final Duration METADATA_WAIT = Duration.ofSeconds(10);

    /**
     * Shared subscriptions are per daemon, topic and source: two sources may read one partition
     * from apart.
     */
    record Key(String socket, String topic, String sourceId) {}

    private final PushSettings settings;
    private final BrokerdClient client;
    // Guarded by this.
    private final Set<PushMember> members = new HashSet<>();
    private PushMember[] owners = new PushMember[0];
    private long[] positions = new long[0];
    // Partitions assign() gave a start since the daemon subscription was made: its rows of them
    // are not where their new owner starts.
    private final BitSet restarted = new BitSet();
    private boolean changed;
    // The dispatcher thread's own.
    private RecordsSubscription subscription;

    private SharedRecordsSubscription(Key key, PushSettings settings) {
        super(key, "sluice-push-" + key.topic(), settings.maxOpenBatches(), POLL_TIMEOUT);
        this.settings = settings;
        this.client = BrokerdClient.builder(Path.of(settings.socket())).build();
    }

    /** Joins the shared subscription of {@code key}, starting it if it is the first reader. */
    static PushMember join(Key key, PushSettings settings, PushInbox inbox) {
        return join(
                key,
                k -> new SharedRecordsSubscription(k, settings),
                (SharedRecordsSubscription shared) -> shared.add(inbox));
    }

    /**
     * The reader is gone: its partitions are dropped and its shares count as recycled. Only once
     * the reader no longer reads them: Flink closes a reader on its task thread.
     */
    static void leave(PushMember member) {
        member.subscription.leave(() -> member.subscription.detach(member));
    }

    private synchronized PushMember add(PushInbox inbox) {
        PushMember member = new PushMember(this, inbox);
        members.add(member);
        return member;
    }

    private synchronized void detach(PushMember member) {
        members.remove(member);
        for (int p = 0; p < owners.length; p++) {
            if (owners[p] == member) {
                owners[p] = null;
                changed = true;
            }
        }
        member.takeHeld().forEach(this::recycleLocked);
    }

    /** From now on {@code member} gets {@code partition}'s rows, from {@code offset}. */
    synchronized void assign(PushMember member, int partition, long offset) {
        if (partition >= owners.length) {
            owners = Arrays.copyOf(owners, partition + 1);
            positions = Arrays.copyOf(positions, partition + 1);
        }
        owners[partition] = member;
        positions[partition] = offset;
        restarted.set(partition);
        changed = true;
        wakeUp();
    }

    synchronized void unassign(PushMember member, int partition) {
        if (partition < owners.length && owners[partition] == member) {
            owners[partition] = null;
            changed = true;
            wakeUp();
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
        records.shared.release();
    }

    @Override
    protected boolean canPoll() {
        return subscription != null;
    }

    /** Once the old daemon subscription, if any, is drained. */
    @Override
    protected synchronized boolean renewalDue() {
        return changed && (subscription == null || subscription.isDrained());
    }

    /** While a renewal is due, drains the daemon subscription first. */
    @Override
    protected RecordBatch poll(Duration timeout) throws IOException {
        boolean drain;
        synchronized (this) {
            drain = changed;
        }
        if (drain) {
            subscription.drain();
        }
        return subscription.poll(timeout);
    }

    /** Fails the readers; readers that join later get a new shared subscription. */
    @Override
    protected synchronized void failed(Throwable cause) {
        LOG.error("the push subscription to {} failed", key(), cause);
        members.forEach(member -> member.inbox.deliver(cause));
    }

    /** Subscribes again for the partitions the readers own now. */
    @Override
    protected void renew() throws IOException, InterruptedException {
        closeSubscription();
        SubscriptionRequest.Builder request =
                SubscriptionRequest.builder(key().topic())
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
            restarted.clear();
            changed = false;
        }
        if (partitions > 0) {
            subscription = subscribe(request.build());
            if (subscription != null) {
                LOG.info("subscribed to {} for {} partitions", key(), partitions);
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
                LOG.info("{}: {}; asking again in {} ms", key(), e.getMessage(), backoffMillis);
            }
            // The last reader's leave must not wait out the backoff.
            if (awaitStop(TimeUnit.MILLISECONDS.toNanos(backoffMillis))) {
                return null;
            }
            backoffMillis = Math.min(1000, backoffMillis * 2);
        }
    }

    @Override
    protected void closeSubscription() {
        if (subscription != null) {
            try {
                subscription.close();
            } catch (IOException e) {
                LOG.warn("closing the subscription to {}", key(), e);
            }
            subscription = null;
        }
    }

    /** Hands each row to the reader owning its partition, once. */
    @Override
    protected synchronized void route(SharedBatch<RecordBatch> shared) {
        RecordBatch batch = shared.batch();
        Map<PushMember, PushedRecords> shares = new IdentityHashMap<>();
        PushMember lastOwner = null;
        PushedRecords lastShare = null;
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
            if (owner == null || restarted.get(partition)) {
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
                                owner, m -> new PushedRecords(shared, key().topic(), m));
            }
            lastShare.add(partition, first, end);
        }
        shares.forEach(
                (member, records) -> {
                    shared.hold();
                    member.held.add(records);
                    member.inbox.deliver(records);
                });
    }
}
