package dev.sluice.client.time;

/**
 * Time that moves only when someone waits: parking advances it by what was asked, plus {@link
 * #overshootNanos} (0 unless a test sets it), as a real park wakes up late.
 */
public final class FakeClock implements NanoClock {
    private long now = 1_000_000_000L;
    public long overshootNanos;
    public long parks;
    public long parkedNanos;

    @Override
    public long nanoTime() {
        return now;
    }

    @Override
    public void parkNanos(long nanos) {
        if (nanos <= 0) {
            throw new AssertionError("parked for " + nanos + " ns: a wait of nothing spins");
        }
        parks++;
        parkedNanos += nanos;
        now += nanos + overshootNanos;
    }

    public void advance(long nanos) {
        now += nanos;
    }

    public void advanceTo(long time) {
        if (time > now) {
            now = time;
        }
    }
}
