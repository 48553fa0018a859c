package dev.sluice.client.shared;

import dev.sluice.client.annotation.Internal;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A polled batch and how many holders still hold a share of it. The dispatcher holds it while it
 * routes the batch; the routing function takes one {@link #hold()} for each share it hands out,
 * before handing it out, and each share is {@link #release() released} once, by its holder or, when
 * the holder leaves, for it. The last release gives the batch back to its {@link
 * SharedSubscription}'s dispatcher, which closes it (and so frees its slot): a batch lives in
 * shared memory until then.
 */
@Internal
public final class SharedBatch<B extends AutoCloseable> {
    private final SharedSubscription<?, B> owner;
    private final B batch;
    // The dispatcher's own hold while it routes, so that no share released meanwhile frees it.
    private final AtomicInteger holds = new AtomicInteger(1);

    SharedBatch(SharedSubscription<?, B> owner, B batch) {
        this.owner = owner;
        this.batch = batch;
    }

    /** The batch; valid until the last share is released. */
    public B batch() {
        return batch;
    }

    /** One more share, taken before it is handed out. */
    public void hold() {
        holds.incrementAndGet();
    }

    /** A share is done with; callable from any thread, once per {@link #hold()}. */
    public void release() {
        if (holds.decrementAndGet() == 0) {
            owner.released(this);
        }
    }
}
