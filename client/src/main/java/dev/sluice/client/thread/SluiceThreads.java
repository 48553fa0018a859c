package dev.sluice.client.thread;

import dev.sluice.client.annotation.Internal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadFactory;

/**
 * Makes every thread Sluice starts, in the client and in the Flink connector, so that they all look
 * alike: named {@code sluice-...} (a thread dump tells them from Flink's and Kafka's), daemon
 * threads (none keeps a JVM up), and with Sluice's own class loader as their context class loader.
 *
 * <p>The context class loader matters on a Flink TaskManager: a new thread inherits its creator's,
 * and a thread created on a task thread would hold that job's user-code class loader for as long as
 * it runs, whoever uses it later. Ending each thread with what owns it is the callers' part
 * (docs/architecture.md, "Threads").
 */
@Internal
public final class SluiceThreads {
    /** The prefix of every Sluice thread's name. */
    public static final String PREFIX = "sluice-";

    private SluiceThreads() {}

    /**
     * A daemon thread named {@code name}, not started.
     *
     * @throws IllegalArgumentException if {@code name} does not start with {@value #PREFIX}
     */
    public static Thread newThread(String name, Runnable task) {
        checkName(name);
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        thread.setContextClassLoader(SluiceThreads.class.getClassLoader());
        return thread;
    }

    /** A factory of such threads, all named {@code name}, for an executor. */
    public static Factory factory(String name) {
        checkName(name);
        return new Factory(name);
    }

    /**
     * Makes an executor's threads and can wait until they ended: an executor that terminated has
     * threads that are still on their way out, and whoever closes it should return once they are
     * gone.
     */
    public static final class Factory implements ThreadFactory {
        private final String name;
        // Guarded by this: the threads made and not seen ended yet.
        private final List<Thread> threads = new ArrayList<>();

        private Factory(String name) {
            this.name = name;
        }

        @Override
        public synchronized Thread newThread(Runnable task) {
            threads.removeIf(thread -> !thread.isAlive());
            Thread thread = SluiceThreads.newThread(name, task);
            threads.add(thread);
            return thread;
        }

        /**
         * Waits up to {@code timeout} until every thread made has ended; shut the executor down
         * first. Returns whether they all did. The calling thread is not waited for.
         */
        public boolean awaitEnd(Duration timeout) throws InterruptedException {
            List<Thread> made;
            synchronized (this) {
                made = List.copyOf(threads);
            }
            long deadline = System.nanoTime() + timeout.toNanos();
            boolean ended = true;
            for (Thread thread : made) {
                if (thread == Thread.currentThread()) {
                    continue;
                }
                long left = deadline - System.nanoTime();
                if (left > 0) {
                    thread.join(Math.max(1, left / 1_000_000));
                }
                ended &= !thread.isAlive();
            }
            return ended;
        }
    }

    private static void checkName(String name) {
        if (!name.startsWith(PREFIX)) {
            throw new IllegalArgumentException(
                    "a Sluice thread's name starts with " + PREFIX + ", got " + name);
        }
    }
}
