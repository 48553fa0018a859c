package dev.sluice.client.stream;

import dev.sluice.client.annotation.Internal;
import dev.sluice.client.thread.SluiceThreads;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes a reader's {@link DeliveryProgress} on the progress topic: the latest one every {@code
 * interval} if it changed, so at most one record per interval whatever the chunk rate, and the
 * final one at once at the end of the stream and on close. Unchanged progress goes out again every
 * {@link #HEARTBEAT}: a reader waiting for chunks is still there, which the scheduler needs to tell
 * from a reader that is gone (docs/generation.md, "The scheduler": the jobs of a consumer that quit
 * are aborted).
 *
 * <p>When the reader's daemon subscription was renewed ({@link #resubscribed()}), the next record
 * carries {@code RESUBSCRIBED} and goes out at once: chunks that reached the daemon only through
 * shared memory and were not delivered are lost, and the scheduler hands their tasks out again as
 * soon as it reads it (docs/formats.md, "Delivery progress"; docs/generation.md, "Recovery"). The
 * flag stays set until a record with it has been handed to the producer, and is set again if that
 * record fails: a flag that never arrives leaves the stream waiting for chunks nobody makes.
 *
 * <p>Sending on a timer rather than on the reader's own calls matters: a reader waiting for its
 * next chunk makes no calls, and a progress record held back until then could hold back the
 * generation that would send that chunk.
 */
@Internal
final class ProgressReporter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ProgressReporter.class);

    /** How often unchanged progress is sent again. */
    static final Duration HEARTBEAT = Duration.ofSeconds(1);

    private final Producer<byte[], byte[]> producer;
    private final String topic;
    private final Duration closeTimeout;
    private final AtomicReference<DeliveryProgress> latest = new AtomicReference<>();
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    // A renewal of the daemon subscription that no record handed to the producer has told yet.
    private final AtomicBoolean resubscribed = new AtomicBoolean();
    private volatile ScheduledExecutorService timer;
    private volatile SluiceThreads.Factory timerThreads;
    private final NanoClock clock;
    // Guarded by this: what was handed to the producer last, and when.
    private DeliveryProgress lastSent;
    private long lastSentNanos;
    private boolean closed;

    ProgressReporter(Producer<byte[], byte[]> producer, String topic, Duration closeTimeout) {
        this(producer, topic, closeTimeout, NanoClock.SYSTEM);
    }

    ProgressReporter(
            Producer<byte[], byte[]> producer,
            String topic,
            Duration closeTimeout,
            NanoClock clock) {
        this.producer = producer;
        this.topic = topic;
        this.closeTimeout = closeTimeout;
        this.clock = clock;
    }

    /** Sends every {@code interval} from a daemon thread of its own, which {@link #close} ends. */
    void start(Duration interval, String name) {
        timerThreads = SluiceThreads.factory("sluice-progress-" + name);
        timer = new ScheduledThreadPoolExecutor(1, timerThreads);
        long nanos = interval.toNanos();
        timer.scheduleAtFixedRate(this::tick, 0, nanos, TimeUnit.NANOSECONDS);
    }

    /**
     * The reader's newest progress; the end of the stream goes out at once, from the timer's thread
     * when there is one, so that the reader never waits on the producer.
     */
    void update(DeliveryProgress progress) {
        latest.set(progress);
        if (progress.endOfStream()) {
            sendNow();
        }
    }

    /**
     * The reader's daemon subscription was renewed: the next record, sent at once, carries {@code
     * RESUBSCRIBED}; the records after it do not. Callable from any thread (the subscription's
     * dispatcher tells it), and it does not wait on the producer once the timer runs.
     */
    void resubscribed() {
        resubscribed.set(true);
        sendNow();
    }

    /** A tick now, from the timer's thread when there is one, so that the caller never waits. */
    private void sendNow() {
        if (timer == null) {
            tick();
        } else {
            try {
                timer.execute(this::tick);
            } catch (RejectedExecutionException e) {
                // Closing: close() sends the latest.
            }
        }
    }

    /**
     * Sends the latest progress unless it went out already, less than a heartbeat ago, and no
     * renewal waits to be told.
     */
    synchronized void tick() {
        DeliveryProgress latestProgress = latest.get();
        long now = clock.nanoTime();
        if (closed || latestProgress == null) {
            return;
        }
        boolean renewed = resubscribed.getAndSet(false);
        if (!renewed
                && latestProgress.equals(lastSent)
                && now - lastSentNanos < HEARTBEAT.toNanos()) {
            return;
        }
        DeliveryProgress progress =
                renewed ? latestProgress.withResubscribed(true) : latestProgress;
        lastSent = progress;
        lastSentNanos = now;
        try {
            producer.send(
                    new ProducerRecord<>(
                            topic,
                            DeliveryProgressCodec.key(progress),
                            DeliveryProgressCodec.encode(progress)),
                    (metadata, error) -> {
                        if (error == null) {
                            sent.incrementAndGet();
                        } else {
                            failed(progress, error);
                        }
                    });
        } catch (RuntimeException e) {
            // The producer refused before sending (metadata timeout, closed...).
            failed(progress, e);
        }
    }

    private void failed(DeliveryProgress progress, Exception error) {
        if (progress.resubscribed()) {
            // The scheduler must hear of the renewal: the next tick tells it again.
            resubscribed.set(true);
        }
        // The next record carries the same information, newer: log the first and every 100th.
        if (failures.getAndIncrement() % 100 == 0) {
            LOG.warn(
                    "could not publish the delivery progress of {} on {} ({} failures so far): {}",
                    progress.key(),
                    topic,
                    failures.get(),
                    error.toString());
        }
    }

    long sent() {
        return sent.get();
    }

    long failures() {
        return failures.get();
    }

    /**
     * Ends the timer's thread, sends the latest progress, then closes the producer, waiting up to
     * the close timeout for each.
     */
    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
            // The thread ends with its reader (docs/architecture.md, "Threads"); a tick it is in
            // the middle of gets the close timeout to hand its record over.
            try {
                timerThreads.awaitEnd(closeTimeout);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        tick();
        synchronized (this) {
            closed = true;
        }
        producer.close(closeTimeout);
    }
}
