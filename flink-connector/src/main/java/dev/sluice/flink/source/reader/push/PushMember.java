package dev.sluice.flink.source.reader.push;

import java.util.HashSet;
import java.util.Set;

/** A source reader in one {@link PushHub}: the shares routed to it and not recycled yet. */
final class PushMember {
    final PushHub hub;
    final PushInbox inbox;
    // Guarded by the hub.
    final Set<PushedRecords> held = new HashSet<>();

    PushMember(PushHub hub, PushInbox inbox) {
        this.hub = hub;
        this.inbox = inbox;
    }

    int heldCount() {
        synchronized (hub) {
            return held.size();
        }
    }

    /** Under the hub's lock: the shares held, which the hub takes back. */
    Set<PushedRecords> takeHeld() {
        Set<PushedRecords> taken = new HashSet<>(held);
        held.clear();
        return taken;
    }
}
