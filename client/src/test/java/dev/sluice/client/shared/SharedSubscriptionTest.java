package dev.sluice.client.shared;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.junit.Await;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The registry, the dispatcher, the routing and the counted shares of {@link SharedSubscription},
 * against a scripted subscription whose batches name the holders they go to.
 */
class SharedSubscriptionTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    // How long a test looks for something that must not happen: the dispatcher polls every 5 ms.
    private static final Duration QUIET = Duration.ofMillis(200);

    private final List<Holder> holders = new ArrayList<>();

    @AfterEach
    void leaveAll() {
        holders.forEach(Holder::leave);
        assertThat(SharedSubscription.openCount(Key.class)).isZero();
    }

    @Test
    void holdersOfOneKeyShareOneSubscriptionAndAnotherKeyGetsItsOwn() throws IOException {
        Key a = newKey();
        Key b = newKey();

        Holder first = join(a, "x");
        Holder second = join(a, "y");
        Holder other = join(b, "x");

        assertThat(second.subscription).isSameAs(first.subscription);
        assertThat(other.subscription).isNotSameAs(first.subscription);
        assertThat(SharedSubscription.openCount(Key.class)).isEqualTo(2);
        assertThat(Scripted.opened(a)).isEqualTo(1);
        assertThat(Scripted.opened(b)).isEqualTo(1);
    }

    @Test
    void theLastHolderToLeaveClosesTheSubscriptionAndEndsItsThreadBeforeItReturns()
            throws Exception {
        Key key = newKey();
        Holder first = join(key, "x");
        Holder second = join(key, "y");
        Scripted shared = first.subscription;
        Thread dispatcher = shared.dispatcher();

        first.leave();
        assertThat(shared.closed).isFalse();
        assertThat(dispatcher.isAlive()).isTrue();
        assertThat(SharedSubscription.openCount(Key.class)).isEqualTo(1);

        second.leave();
        assertThat(shared.closed).isTrue();
        assertThat(dispatcher.isAlive()).isFalse();
        assertThat(SharedSubscription.openCount(Key.class)).isZero();

        // The next holder of the key opens a new one.
        Holder again = join(key, "x");
        assertThat(again.subscription).isNotSameAs(shared);
        assertThat(Scripted.opened(key)).isEqualTo(2);
    }

    @Test
    void theRoutingFunctionDecidesWhichHoldersGetABatch() throws Exception {
        Key key = newKey();
        Holder x = join(key, "x");
        Holder y = join(key, "y");
        Batch toX = x.subscription.offer("x");
        Batch toBoth = x.subscription.offer("y", "x", "y");

        assertThat(x.next()).isSameAs(toX);
        assertThat(x.next()).isSameAs(toBoth);
        assertThat(y.next()).as("y's first batch: the one of x is not y's").isSameAs(toBoth);
    }

    @Test
    void aBatchIsClosedOnceEveryShareIsReleasedAlsoThoseOfAHolderThatLeft() throws Exception {
        Key key = newKey();
        Holder x = join(key, "x");
        Holder y = join(key, "y");
        join(key, "z");
        Batch batch = x.subscription.offer("x", "y");
        Batch toNobody = x.subscription.offer("nobody");

        x.release(x.next());
        assertThat(y.next()).isSameAs(batch);
        Await.until("the batch no holder got is closed", WAIT, toNobody.closed::get);
        assertThat(batch.closed).as("y still holds its share").isFalse();

        // y leaves without releasing its share: leaving releases it.
        y.leave();
        Await.until("the batch is closed", WAIT, batch.closed::get);
    }

    @Test
    void noMoreBatchesThanTheLimitArePolledUntilOneIsReleased() throws Exception {
        Key key = newKey(1);
        Holder x = join(key, "x");
        Batch first = x.subscription.offer("x");
        Batch second = x.subscription.offer("x");

        assertThat(x.next()).isSameAs(first);
        assertThat(x.nextWithin(QUIET)).as("one batch open at most").isNull();
        x.release(first);
        assertThat(x.next()).isSameAs(second);
    }

    @Test
    void aRefusedHolderGetsASubscriptionOfItsOwnOutsideTheRegistry() throws Exception {
        Key key = newKey();
        Holder x = join(key, "x");
        Holder late = join(key, "late");

        assertThat(late.subscription).isNotSameAs(x.subscription);
        assertThat(SharedSubscription.openCount(Key.class)).isEqualTo(1);
        late.leave();
        assertThat(late.subscription.closed).isTrue();
        assertThat(SharedSubscription.openCount(Key.class))
                .as("its leaving leaves the registered one")
                .isEqualTo(1);
        assertThat(join(key, "y").subscription).isSameAs(x.subscription);
    }

    @Test
    void aFailedSubscriptionTellsItsHoldersAndLeavesTheRegistry() throws Exception {
        Key key = newKey();
        Holder x = join(key, "x");
        Scripted failing = x.subscription;
        IOException cause = new IOException("the daemon refused");

        failing.failNextPoll(cause);
        Await.until("the holder is told", WAIT, () -> failing.failedWith == cause);
        assertThat(SharedSubscription.openCount(Key.class)).isZero();
        Await.until("the failed subscription is closed", WAIT, () -> failing.closed);
        assertThat(join(key, "y").subscription).isNotSameAs(failing);
    }

    @Test
    void aRenewalWaitsUntilEveryBatchIsBack() throws Exception {
        Key key = newKey(1);
        Holder x = join(key, "x");
        Scripted shared = x.subscription;
        Batch held = shared.offer("x");
        assertThat(x.next()).isSameAs(held);

        shared.askRenewal();
        Batch afterRenewal = shared.offer("x");
        // Time for a renewal that would not wait.
        assertThat(x.nextWithin(QUIET)).isNull();
        assertThat(shared.renewals.get()).as("not renewed while a batch is held").isZero();
        x.release(held);
        assertThat(x.next()).isSameAs(afterRenewal);
        assertThat(shared.renewals.get()).isEqualTo(1);
    }

    private static Key newKey() {
        return newKey(4);
    }

    private static Key newKey(int maxOpenBatches) {
        return new Key(UUID.randomUUID().toString(), maxOpenBatches);
    }

    private Holder join(Key key, String name) throws IOException {
        Holder holder =
                SharedSubscription.join(
                        key, Scripted::new, (Scripted shared) -> shared.admit(name));
        holders.add(holder);
        return holder;
    }

    /** The key of the test's subscriptions, which keep up to {@code maxOpenBatches} open. */
    record Key(String name, int maxOpenBatches) {}

    /** A batch that names the holders its rows go to. */
    static final class Batch implements AutoCloseable {
        final List<String> rows;
        final AtomicBoolean closed = new AtomicBoolean();

        Batch(List<String> rows) {
            this.rows = rows;
        }

        @Override
        public void close() {
            closed.set(true);
        }
    }

    /** Batches offered by the test, routed to the holders their rows name. */
    static final class Scripted extends SharedSubscription<Key, Batch> {
        private static final Map<Key, AtomicInteger> OPENED = new HashMap<>();

        private final LinkedBlockingQueue<Batch> batches = new LinkedBlockingQueue<>();
        // Guarded by this.
        private final Map<String, Holder> holders = new HashMap<>();
        private final AtomicInteger renewals = new AtomicInteger();
        private volatile IOException failNext;
        private volatile boolean renewalAsked;
        private volatile Thread dispatcher;
        volatile boolean closed;
        volatile Throwable failedWith;

        Scripted(Key key) {
            super(
                    key,
                    "sluice-test-shared-" + key.name(),
                    key.maxOpenBatches(),
                    Duration.ofMillis(5));
            synchronized (OPENED) {
                OPENED.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
            }
        }

        static int opened(Key key) {
            synchronized (OPENED) {
                return OPENED.get(key).get();
            }
        }

        /** A new holder, or null for one named "late", as a stream already under way. */
        synchronized Holder admit(String name) {
            if (name.equals("late") && !holders.isEmpty()) {
                return null;
            }
            Holder holder = new Holder(this, name);
            holders.put(name, holder);
            return holder;
        }

        Batch offer(String... rows) {
            Batch batch = new Batch(List.of(rows));
            batches.add(batch);
            return batch;
        }

        Thread dispatcher() {
            Await.until("the dispatcher polls", WAIT, () -> dispatcher != null);
            return dispatcher;
        }

        void failNextPoll(IOException cause) {
            failNext = cause;
        }

        void askRenewal() {
            renewalAsked = true;
            wakeUp();
        }

        void leave(Holder holder) {
            leave(
                    () -> {
                        synchronized (this) {
                            holders.remove(holder.name);
                        }
                        holder.releaseAll();
                    });
        }

        @Override
        protected Batch poll(Duration timeout) throws IOException, InterruptedException {
            dispatcher = Thread.currentThread();
            IOException failure = failNext;
            if (failure != null) {
                throw failure;
            }
            return batches.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
        }

        @Override
        protected synchronized void route(SharedBatch<Batch> batch) {
            Set<String> given = new HashSet<>();
            for (String row : batch.batch().rows) {
                Holder holder = holders.get(row);
                if (holder != null && given.add(row)) {
                    batch.hold();
                    holder.inbox.add(batch);
                }
            }
        }

        @Override
        protected boolean renewalDue() {
            return renewalAsked;
        }

        @Override
        protected void renew() {
            renewals.incrementAndGet();
            renewalAsked = false;
        }

        @Override
        protected void failed(Throwable cause) {
            failedWith = cause;
        }

        @Override
        protected void closeSubscription() {
            closed = true;
        }
    }

    /** A holder: the shares routed to it, until it releases them or leaves. */
    static final class Holder {
        final Scripted subscription;
        final String name;
        final LinkedBlockingQueue<SharedBatch<Batch>> inbox = new LinkedBlockingQueue<>();
        // The shares taken from the inbox and not released: the test thread's own.
        private final Map<Batch, SharedBatch<Batch>> taken = new HashMap<>();
        private boolean left;

        Holder(Scripted subscription, String name) {
            this.subscription = subscription;
            this.name = name;
        }

        Batch next() throws InterruptedException {
            Batch batch = nextWithin(WAIT);
            assertThat(batch).as("a batch for %s", name).isNotNull();
            return batch;
        }

        Batch nextWithin(Duration timeout) throws InterruptedException {
            SharedBatch<Batch> share = inbox.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
            if (share == null) {
                return null;
            }
            taken.put(share.batch(), share);
            return share.batch();
        }

        void release(Batch batch) {
            taken.remove(batch).release();
        }

        /** Under the registry's lock, when leaving. */
        void releaseAll() {
            taken.values().forEach(SharedBatch::release);
            taken.clear();
            for (SharedBatch<Batch> share; (share = inbox.poll()) != null; ) {
                share.release();
            }
        }

        void leave() {
            if (!left) {
                left = true;
                subscription.leave(this);
            }
        }
    }
}
