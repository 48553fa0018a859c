package dev.sluice.client.shared;

import dev.sluice.client.annotation.Internal;
import dev.sluice.client.thread.SluiceThreads;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One daemon subscription that several readers of this process share, "only one RPC": the daemon
 * fetches and copies into shared memory once what would otherwise be fetched once per reader. The
 * stream reader's chunks (docs/stream-reader.md, "One subscription per job and topic in a process")
 * and the Flink source's PUSH records (docs/flink-source.md, "One subscription per TaskManager,
 * shared") are its two users, each named after what it shares: {@code SharedChunkSubscription}
 * (package {@code dev.sluice.client.read}) and {@code SharedRecordsSubscription} (the Flink
 * connector's {@code source.reader.push}); each subclass brings the subscription it polls and the
 * routing function that hands a batch's rows to its holders.
 *
 * <p><b>Registry.</b> One subscription per key per process: the first holder of a key opens it,
 * later ones join it, and it leaves the registry when its last holder leaves or when it fails (a
 * holder that joins later opens a new one). A subclass may refuse a holder (a stream under way);
 * that holder gets a subscription of its own, outside the registry. Keys are typed, records of the
 * subclass: two kinds of key never share. The registry is a static field of this class, so it is
 * one per class loader: on a Flink TaskManager that loads Sluice child-first from each job's jar,
 * one per job.
 *
 * <p><b>Dispatcher.</b> The subscription is not thread-safe, so one thread owns it from the first
 * holder to the last: it polls while fewer than {@code maxOpenBatches} batches are open, routes
 * each batch, closes the batches whose shares all came back, and renews the subscription when the
 * subclass asks (once every batch is back: their rows live in the segment). When every batch is
 * held it stops polling, the daemon's slots fill and it pauses: one subscription's backpressure.
 *
 * <p><b>Batches.</b> The dispatcher owns each batch it polls; the routing function hands out shares
 * of it ({@link SharedBatch#hold()}), each released once by its holder, or for it when it leaves.
 * The batch is closed, its slot given back to the daemon, after the last release.
 *
 * <p><b>End.</b> The last holder's {@link #leave} stops the dispatcher, which waits until every
 * batch is back, closes the subscription and ends; that leave returns once it has
 * (docs/architecture.md, "Threads"): the thread holds its owner's classes, and on a TaskManager
 * that runs job after job it must not outlive its job. A failure of the subscription ends the
 * dispatcher the same way once the shares are back; the subclass tells its holders ({@link
 * #failed}).
 */
@Internal
public abstract class SharedSubscription<K, B extends AutoCloseable> {
    private static final Logger LOG = LoggerFactory.getLogger(SharedSubscription.class);
    // Guards every subscription's holder count too.
    private static final Map<Object, SharedSubscription<?, ?>> OPEN = new HashMap<>();
    // How long the last holder's leave waits for the dispatcher: it ends within a poll once every
    // share is back, or a request to the daemon once that is answered.
    private static final Duration END_WAIT = Duration.ofSeconds(30);

    /** Opens the subscription of a key, or fails with {@code E}. */
    @FunctionalInterface
    public interface Opener<K, S, E extends Exception> {
        S open(K key) throws E;
    }

    private final K key;
    private final int maxOpenBatches;
    private final Duration pollTimeout;
    private final Thread dispatcher;
    // Guarded by OPEN.
    private int holders;
    private boolean registered;
    // Guarded by lock, which is taken last: holders release from any thread, under locks of their
    // own.
    private final Object lock = new Object();
    private final ArrayDeque<SharedBatch<B>> released = new ArrayDeque<>();
    private boolean stopping;
    private boolean signalled;
    private volatile Throwable failure;
    // The dispatcher's own.
    private int openBatches;

    /**
     * A subscription of {@code key} whose dispatcher, named {@code threadName}, keeps at most
     * {@code maxOpenBatches} batches open and polls for up to {@code pollTimeout} at a time.
     */
    protected SharedSubscription(
            K key, String threadName, int maxOpenBatches, Duration pollTimeout) {
        this.key = key;
        this.maxOpenBatches = maxOpenBatches;
        this.pollTimeout = pollTimeout;
        this.dispatcher = SluiceThreads.newThread(threadName, this::dispatch);
    }

    /**
     * A new holder of {@code key}'s subscription, made by {@code admit}: the one open in this
     * process, or one {@code open} opens if there is none. When {@code admit} refuses the open one
     * (returns null), the holder gets a subscription of its own, which no other holder joins.
     * {@code admit} must accept a subscription just opened.
     */
    protected static <K, S extends SharedSubscription<K, ?>, H, E extends Exception> H join(
            K key, Opener<K, S, E> open, Function<S, H> admit) throws E {
        synchronized (OPEN) {
            @SuppressWarnings("unchecked")
            S shared = (S) OPEN.get(key);
            H holder = shared == null ? null : admit.apply(shared);
            if (holder == null) {
                boolean alone = shared != null;
                shared = open.open(key);
                holder = admit.apply(shared);
                // Private fields are not members of the type variable.
                SharedSubscription<K, ?> opened = shared;
                if (!alone) {
                    OPEN.put(key, opened);
                    opened.registered = true;
                }
                opened.dispatcher.start();
            }
            SharedSubscription<K, ?> joined = shared;
            joined.holders++;
            return holder;
        }
    }

    /** Subscriptions open in this process's registry whose key is a {@code keyType}. */
    protected static int openCount(Class<?> keyType) {
        synchronized (OPEN) {
            return (int) OPEN.keySet().stream().filter(keyType::isInstance).count();
        }
    }

    /**
     * A holder leaves: {@code detach}, run under the registry's lock, takes it out of the routing
     * and releases the shares it still holds. The last holder's leave returns once the dispatcher
     * has closed the subscription and ended, or after {@link #END_WAIT} (logged).
     */
    protected final void leave(Runnable detach) {
        boolean last;
        synchronized (OPEN) {
            detach.run();
            last = --holders == 0;
            if (last) {
                if (registered) {
                    OPEN.remove(key, this);
                }
                synchronized (lock) {
                    stopping = true;
                }
            }
            wakeUp();
        }
        if (last) {
            awaitEnd();
        }
    }

    /** The key this subscription was opened for. */
    protected final K key() {
        return key;
    }

    /** Why the subscription ended, or null while it runs. */
    protected final Throwable failure() {
        return failure;
    }

    /** Wakes the dispatcher up: the subclass's routing changed (a renewal may be due). */
    protected final void wakeUp() {
        synchronized (lock) {
            signalled = true;
            lock.notifyAll();
        }
    }

    /**
     * Waits up to {@code nanos}, or until the last holder left; returns whether it has. For a
     * dispatcher that waits to ask the daemon again, which the last leave must not wait out.
     */
    protected final boolean awaitStop(long nanos) throws InterruptedException {
        long deadline = System.nanoTime() + nanos;
        synchronized (lock) {
            for (long left; !stopping && (left = deadline - System.nanoTime()) > 0; ) {
                TimeUnit.NANOSECONDS.timedWait(lock, left);
            }
            return stopping;
        }
    }

    /** The next batch, waiting up to {@code timeout}; null if none came. On the dispatcher. */
    protected abstract B poll(Duration timeout) throws IOException, InterruptedException;

    /**
     * The routing function: hands the batch's rows to the holders they go to, taking a {@link
     * SharedBatch#hold()} for each share before handing it out. A batch with no share is closed at
     * once. On the dispatcher.
     */
    protected abstract void route(SharedBatch<B> batch) throws IOException;

    /** Closes the subscription, once every batch is back. On the dispatcher. */
    protected abstract void closeSubscription();

    /**
     * Whether there is a subscription to poll; if not, the dispatcher waits for a {@link #wakeUp}.
     */
    protected boolean canPoll() {
        return true;
    }

    /**
     * Whether the subscription must be renewed before the next poll (the holders' partitions
     * changed): the dispatcher stops polling and {@link #renew renews} it once every batch is back.
     */
    protected boolean renewalDue() {
        return false;
    }

    /** Renews the subscription; every batch is back. On the dispatcher. */
    protected void renew() throws IOException, InterruptedException {}

    /**
     * The subscription failed with {@code cause}: tells the holders. Under the registry's lock,
     * with the subscription already out of it, so that a holder joins either before (and is told)
     * or after (and gets a new one).
     */
    protected void failed(Throwable cause) {}

    private void dispatch() {
        try {
            pollUntilStopped();
        } catch (Throwable e) {
            synchronized (OPEN) {
                failure = e;
                if (registered) {
                    OPEN.remove(key, this);
                }
                failed(e);
            }
        }
        // Unmapping the segment under a holder still reading a share would crash the JVM: every
        // share comes back first, released or taken back when its holder leaves.
        try {
            while (openBatches > 0) {
                awaitSignal(-1);
                closeReleased();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        closeSubscription();
    }

    private void pollUntilStopped() throws IOException, InterruptedException {
        while (true) {
            closeReleased();
            boolean stop;
            synchronized (lock) {
                stop = stopping;
            }
            if (stop) {
                return;
            } else if (renewalDue()) {
                if (openBatches == 0) {
                    renew();
                } else {
                    awaitSignal(-1);
                }
            } else if (openBatches >= maxOpenBatches || !canPoll()) {
                awaitSignal(-1);
            } else {
                long start = System.nanoTime();
                B batch = poll(pollTimeout);
                if (batch != null) {
                    openBatches++;
                    SharedBatch<B> shared = new SharedBatch<>(this, batch);
                    try {
                        route(shared);
                    } finally {
                        shared.release();
                    }
                } else {
                    // The subscription returns at once while the daemon is away and batches are
                    // still held (docs/brokerd.md): wait out the poll rather than spin.
                    awaitSignal(Math.max(0, pollTimeout.toNanos() - (System.nanoTime() - start)));
                }
            }
        }
    }

    /**
     * Waits up to {@code nanos} (forever if negative) for a batch to come back or a {@link
     * #wakeUp}.
     */
    private void awaitSignal(long nanos) throws InterruptedException {
        long deadline = System.nanoTime() + nanos;
        synchronized (lock) {
            while (released.isEmpty() && !signalled) {
                if (nanos < 0) {
                    lock.wait();
                } else {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    TimeUnit.NANOSECONDS.timedWait(lock, left);
                }
            }
            signalled = false;
        }
    }

    /** Closes the batches every holder released. */
    private void closeReleased() {
        ArrayDeque<SharedBatch<B>> done;
        synchronized (lock) {
            if (released.isEmpty()) {
                return;
            }
            done = new ArrayDeque<>(released);
            released.clear();
        }
        for (SharedBatch<B> batch : done) {
            try {
                batch.batch().close();
            } catch (Exception e) {
                LOG.warn("releasing a batch of {}", key, e);
            }
            openBatches--;
        }
    }

    /** Called by the last release of {@code batch}'s shares, on any thread. */
    void released(SharedBatch<B> batch) {
        synchronized (lock) {
            released.add(batch);
            lock.notifyAll();
        }
    }

    /** Waits until the dispatcher has closed the subscription and ended. */
    private void awaitEnd() {
        try {
            dispatcher.join(END_WAIT.toMillis());
        } catch (InterruptedException e) {
            // Flink interrupts a cancelled task's thread: the dispatcher ends all the same,
            // unawaited.
            Thread.currentThread().interrupt();
            return;
        }
        if (dispatcher.isAlive()) {
            LOG.warn("the thread of {} has not ended {} after its last holder", key, END_WAIT);
        }
    }
}
