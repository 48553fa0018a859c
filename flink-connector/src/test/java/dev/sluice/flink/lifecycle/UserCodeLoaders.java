package dev.sluice.flink.lifecycle;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the jobs' user code tells the test, across class loaders: this class is left out of the user
 * jar, so the job's classes, loaded child-first from the jar by Flink's user-code class loader,
 * find this one in the test's class loader, the same class the test reads. It holds the loaders
 * weakly: it must not be what keeps them.
 */
public final class UserCodeLoaders {
    private static final List<WeakReference<ClassLoader>> LOADERS = new ArrayList<>();
    private static final List<String> NAMES = new ArrayList<>();

    /** Records the source job has deserialized. */
    public static final AtomicLong RECORDS = new AtomicLong();

    /** The source job's operator waits on this once it has seen enough, holding its batches. */
    public static volatile CountDownLatch gate = new CountDownLatch(1);

    private UserCodeLoaders() {}

    /** Called from the static initializers of the user jar's classes. */
    public static synchronized void record(Class<?> userClass) {
        ClassLoader loader = userClass.getClassLoader();
        // The test makes the jobs with the same classes from its own loader: only a job's count.
        if (loader == UserCodeLoaders.class.getClassLoader()) {
            return;
        }
        String name = userClass.getSimpleName() + " in " + loader;
        if (!NAMES.contains(name)) {
            LOADERS.add(new WeakReference<>(loader));
            NAMES.add(name);
        }
    }

    /**
     * The user classes seen and their loaders, as "class in loader", whether collected since or
     * not.
     */
    public static synchronized List<String> seen() {
        return List.copyOf(NAMES);
    }

    /** Those whose loader is still alive. */
    public static synchronized List<String> alive() {
        List<String> alive = new ArrayList<>();
        for (int i = 0; i < LOADERS.size(); i++) {
            if (LOADERS.get(i).get() != null) {
                alive.add(NAMES.get(i));
            }
        }
        return alive;
    }
}
