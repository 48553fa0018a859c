package dev.sluice.client.progress;

import dev.sluice.client.annotation.Internal;
import dev.sluice.client.thread.SluiceThreads;
import dev.sluice.client.time.NanoClock;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes a reader's {@link DeliveryProgress} on the progress topic: at most one record per
 * {@code interval} whatever the chunk rate, the newest; sooner, at most one per {@link
 * #TASK_SPACING}, when the reader was delivered the last chunk of a generation task since the last
 * record; at once at the end of the stream; the latest on close. Unchanged progress goes out again
 * every {@link #HEARTBEAT}: a reader waiting for chunks is still there, which the scheduler needs
 * to tell from a reader that is gone (docs/generation.md, "The scheduler": the jobs of a consumer
 * that quit are aborted).
 *
 * <p>Why a delivered task goes out at once: a producer gets a stream's next task only once the
 * stream's progress says one of the tasks it holds was delivered (docs/generation.md, "Room
 * admission"), so every millisecond that record waits here, the producer may wait too; the progress
 * within a task frees nothing there, and more records would only load the broker and everyone who
 * reads the progress topic. A reader knows where tasks end when it was built from its job spec
 * ({@code chunksPerTask}, docs/generation.md, "Tasks and chunks"); without it, only the interval
 * applies.
 *
 * <p>When the reader's daemon subscription was renewed ({@link #resubscribed()}), the next record
 * carries {@code RESUBSCRIBED} and goes out at once: chunks that reached the daemon only through
 * shared memory and were not delivered are lost, and the scheduler hands their tasks out again as
 * soon as it reads it (docs/formats.md, "Delivery progress"; docs/generation.md, "Recovery"). The
 * flag stays set until a record with it has been handed to the producer, and is set again if that
 * record fails: a flag that never arrives leaves the stream waiting for chunks nobody makes.
 *
 * <p>Sending from a thread of its own rather than on the reader's own calls matters: a reader
 * waiting for its next chunk makes no calls, and a progress record held back until then could hold
 * back the generation that would send that chunk.
 */
@Internal
public final class ProgressReporter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ProgressReporter.class);

    /** How often unchanged progress is sent again. */
    static final Duration HEARTBEAT = Duration.ofSeconds(1);

    /**
     * The least time between two records that each tell of a delivered task: tasks of a chunk or
     * two would otherwise make a record of every chunk.
     */
    static final Duration TASK_SPACING = Duration.ofMillis(5);

    /**
     * How long closing waits for a sent end of the stream to be acknowledged, whatever the close
     * timeout: the end is what tells the scheduler that this reader is done, and a reader that
     * closes without it being heard looks gone to the scheduler, which aborts its complete job
     * after its {@code readerTimeout} (30 s). A leader election on the progress topic outlasts the
     * close timeout (docs/generation.md, "A lost broker on the progress path").
     */
    static final Duration END_TIMEOUT = Duration.ofSeconds(30);

    private static final long NONE_SCHEDULED = Long.MAX_VALUE;

    private final Producer<byte[], byte[]> producer;
    // Closed with this reporter when its own; else the application's, shared by its readers.
    private final boolean ownsProducer;
    private final String topic;
    private final long intervalNanos;
    private final long chunksPerTask;
    private final Duration closeTimeout;
    private final NanoClock clock;
    private final AtomicReference<DeliveryProgress> latest = new AtomicReference<>();
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    // A renewal of the daemon subscription that no record handed to the producer has told yet.
    private final AtomicBoolean resubscribed = new AtomicBoolean();
    // When the earliest scheduled tick runs, NONE_SCHEDULED if none: an update due no sooner
    // need not schedule another.
    private final AtomicLong scheduledTickNanos = new AtomicLong(NONE_SCHEDULED);
    private volatile ScheduledExecutorService timer;
    private volatile SluiceThreads.Factory timerThreads;
    // Written under the lock when a record goes out, read without it by update().
    private volatile long lastSentNanos;
    private volatile long lastSentTasks;
    // Guarded by this: what was handed to the producer last, and its acknowledgement.
    private DeliveryProgress lastSent;
    private Future<RecordMetadata> lastSend;
    private boolean closed;

    /**
     * @param ownsProducer whether {@link #close} closes the producer; if not, it waits for this
     *     reporter's last record alone
     * @param chunksPerTask where the stream's tasks end: task {@code t} is the chunks from {@code
     *     seq = t × chunksPerTask}; 0 when unknown
     */
    public ProgressReporter(
            Producer<byte[], byte[]> producer,
            boolean ownsProducer,
            String topic,
            Duration interval,
            long chunksPerTask,
            Duration closeTimeout) {
        this(
                producer,
                ownsProducer,
                topic,
                interval,
                chunksPerTask,
                closeTimeout,
                NanoClock.SYSTEM);
    }

    ProgressReporter(
            Producer<byte[], byte[]> producer,
            boolean ownsProducer,
            String topic,
            Duration interval,
            long chunksPerTask,
            Duration closeTimeout,
            NanoClock clock) {
        this.producer = producer;
        this.ownsProducer = ownsProducer;
        this.topic = topic;
        this.intervalNanos = interval.toNanos();
        this.chunksPerTask = chunksPerTask;
        this.closeTimeout = closeTimeout;
        this.clock = clock;
    }

    /**
     * Sends from a daemon thread of its own, which {@link #close} ends: the latest progress at
     * once, then each update when it is due, and a heartbeat.
     */
    public void start(String name) {
        timerThreads = SluiceThreads.factory("sluice-progress-" + name);
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, timerThreads);
        // Ticks that close() cancels need not wait for their time.
        executor.setRemoveOnCancelPolicy(true);
        timer = executor;
        // A quarter of the heartbeat: an unchanged progress goes out again 1 to 1.25 beats later.
        long beat = HEARTBEAT.toNanos() / 4;
        executor.scheduleAtFixedRate(this::tick, 0, beat, TimeUnit.NANOSECONDS);
    }

    /**
     * The reader's newest progress, sent from the timer's thread when it is due (see the class
     * comment): the reader never waits on the producer.
     */
    public void update(DeliveryProgress progress) {
        latest.set(progress);
        if (progress.endOfStream()) {
            sendNow();
        } else if (tasksDelivered(progress) > lastSentTasks) {
            tickAt(lastSentNanos + TASK_SPACING.toNanos());
        } else {
            tickAt(lastSentNanos + intervalNanos);
        }
    }

    /**
     * The reader's daemon subscription was renewed: the next record, sent at once, carries {@code
     * RESUBSCRIBED}; the records after it do not. Callable from any thread (the subscription's
     * dispatcher tells it), and it does not wait on the producer once the timer runs.
     */
    public void resubscribed() {
        resubscribed.set(true);
        sendNow();
    }

    /**
     * How many tasks of the stream are delivered as far as {@code progress} tells; 0 if unknown.
     */
    private long tasksDelivered(DeliveryProgress progress) {
        return chunksPerTask == 0 ? 0 : (progress.deliveredSeq() + 1) / chunksPerTask;
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

    /** A tick at {@code dueNanos} (at once if that passed), unless one comes by then already. */
    private void tickAt(long dueNanos) {
        ScheduledExecutorService t = timer;
        if (t == null) {
            return;
        }
        while (true) {
            long scheduled = scheduledTickNanos.get();
            if (scheduled != NONE_SCHEDULED && scheduled - dueNanos <= 0) {
                return;
            }
            if (scheduledTickNanos.compareAndSet(scheduled, dueNanos)) {
                break;
            }
        }
        try {
            t.schedule(
                    () -> scheduledTick(dueNanos),
                    Math.max(0, dueNanos - clock.nanoTime()),
                    TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // Closing: close() sends the latest.
            scheduledTickNanos.compareAndSet(dueNanos, NONE_SCHEDULED);
        }
    }

    private void scheduledTick(long dueNanos) {
        // Cleared before the tick reads the latest progress: an update that comes after it
        // schedules a tick of its own. A later tick, superseded by this one, finds it cleared.
        scheduledTickNanos.compareAndSet(dueNanos, NONE_SCHEDULED);
        long wait = tick();
        if (wait > 0) {
            tickAt(clock.nanoTime() + wait);
        }
    }

    /**
     * Sends the latest progress if it is due: a renewal waits to be told; or it changed, and it is
     * the first record, or the end of the stream, or the interval since the last record is over, or
     * it delivered a task and the task spacing is over; or a heartbeat is due.
     *
     * @return how long a changed progress must still wait to be due, in nanoseconds; 0 if nothing
     *     waits
     */
    long tick() {
        return tick(false);
    }

    private synchronized long tick(boolean closing) {
        DeliveryProgress latestProgress = latest.get();
        long now = clock.nanoTime();
        if (closed || latestProgress == null) {
            return 0;
        }
        boolean changed = !latestProgress.equals(lastSent);
        long sinceLast = now - lastSentNanos;
        long tasks = tasksDelivered(latestProgress);
        long spacing =
                tasks > lastSentTasks
                        ? Math.min(intervalNanos, TASK_SPACING.toNanos())
                        : intervalNanos;
        boolean due =
                resubscribed.get()
                        || (changed
                                && (closing
                                        || lastSent == null
                                        || latestProgress.endOfStream()
                                        || sinceLast >= spacing))
                        || sinceLast >= HEARTBEAT.toNanos();
        if (!due) {
            return changed ? spacing - sinceLast : 0;
        }
        boolean renewed = resubscribed.getAndSet(false);
        DeliveryProgress progress =
                renewed ? latestProgress.withResubscribed(true) : latestProgress;
        lastSent = progress;
        lastSentNanos = now;
        lastSentTasks = tasks;
        try {
            lastSend =
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
        return 0;
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

    public long sent() {
        return sent.get();
    }

    public long failures() {
        return failures.get();
    }

    /**
     * Ends the timer's thread, sends the latest progress, then closes the producer if it is this
     * reporter's (else waits for its last record), waiting up to the close timeout for each; up to
     * {@link #END_TIMEOUT} for the producer when the latest is the end of the stream.
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
        tick(true);
        boolean ended;
        Future<RecordMetadata> last;
        String key;
        synchronized (this) {
            closed = true;
            ended = lastSent != null && lastSent.endOfStream();
            last = lastSend;
            key = lastSent == null ? null : lastSent.key();
        }
        Duration wait =
                ended && END_TIMEOUT.compareTo(closeTimeout) > 0 ? END_TIMEOUT : closeTimeout;
        if (ownsProducer) {
            producer.close(wait);
        } else if (last != null) {
            await(last, key, wait);
        }
    }

    /** Waits for the record's acknowledgement; a failure was counted when it came. */
    private static void await(Future<RecordMetadata> send, String key, Duration wait) {
        try {
            send.get(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            LOG.warn(
                    "the last delivery progress of {} was not acknowledged within {} ms",
                    key,
                    wait.toMillis());
        } catch (ExecutionException e) {
            // Counted and logged by the send's callback.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
