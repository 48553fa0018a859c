package dev.sluice.flink.source.reader.push;

import java.util.HashSet;
import java.util.Set;

/**
 * A source reader in one {@link SharedRecordsSubscription}: the shares routed to it and not
 * recycled yet.
 */
final class PushMember {
    final SharedRecordsSubscription subscription;
    final PushInbox inbox;
    // Guarded by the shared subscription.
    final Set<PushedRecords> held = new HashSet<>();

    PushMember(SharedRecordsSubscription subscription, PushInbox inbox) {
        this.subscription = subscription;
        this.inbox = inbox;
    }

    int heldCount() {
        synchronized (subscription) {
            return held.size();
        }
    }

    /**
     * Under the shared subscription's lock: the shares held, which the shared subscription takes
     * back.
     */
    Set<PushedRecords> takeHeld() {
        Set<PushedRecords> taken = new HashSet<>(held);
        held.clear();
        return taken;
    }
}
