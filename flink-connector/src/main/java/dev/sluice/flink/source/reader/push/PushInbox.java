package dev.sluice.flink.source.reader.push;

import dev.sluice.client.brokerd.BrokerdUnreachableException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.flink.annotation.Internal;

/**
 * A source reader's end of the push path: where the shared subscriptions of its topics deliver its
 * shares. It outlives the split readers, which Flink closes and makes anew as splits come and go,
 * and leaves the shared subscriptions when the source reader closes.
 */
@Internal
public final class PushInbox {
    private static final Object WAKE_UP = new Object();

    private final PushSettings settings;
    private final String sourceId;
    private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    private final Map<String, PushMember> members = new HashMap<>();

    public PushInbox(PushSettings settings, String sourceId) {
        this.settings = settings;
        this.sourceId = sourceId;
    }

    /** This reader's member of {@code topic}'s shared subscription, joining it the first time. */
    synchronized PushMember member(String topic) {
        return members.computeIfAbsent(
                topic,
                t ->
                        SharedRecordsSubscription.join(
                                new SharedRecordsSubscription.Key(settings.socket(), t, sourceId),
                                settings,
                                this));
    }

    void deliver(Object item) {
        queue.add(item);
    }

    void wakeUp() {
        queue.add(WAKE_UP);
    }

    /**
     * The next share, or null after {@code timeoutMs} or a wake-up.
     *
     * @throws PushFailedException when a shared subscription failed
     */
    PushedRecords next(long timeoutMs) throws InterruptedException {
        Object item = queue.poll(timeoutMs, TimeUnit.MILLISECONDS);
        if (item instanceof Throwable cause) {
            queue.add(cause);
            throw new PushFailedException(cause);
        }
        return item instanceof PushedRecords records ? records : null;
    }

    /** Slots this reader holds: shares routed to it and not recycled yet. */
    public synchronized int heldCount() {
        return members.values().stream().mapToInt(PushMember::heldCount).sum();
    }

    /** Leaves every shared subscription; the shares still held count as recycled. */
    public synchronized void close() {
        members.values().forEach(SharedRecordsSubscription::leave);
        members.clear();
        queue.clear();
    }

    /** The failure of a subscription shared by the TaskManager's readers. */
    static final class PushFailedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        PushFailedException(Throwable cause) {
            super(
                    "the sluice-brokerd subscription failed: "
                            + cause.getMessage()
                            + (cause instanceof BrokerdUnreachableException
                                    ? " (the source's daemon socket:"
                                            + " SluiceSourceBuilder.setBrokerdSocket, or the table"
                                            + " option sluice.brokerd-socket)"
                                    : ""),
                    cause);
        }
    }
}
