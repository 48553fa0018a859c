package dev.sluice.client.thread;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URL;
import java.net.URLClassLoader;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class SluiceThreadsTest {

    @Test
    void aThreadIsANamedDaemonWithSluicesClassLoaderNotItsCreators() throws Exception {
        // A job's user-code class loader on a Flink task thread, as far as a new thread sees it.
        ClassLoader job = new URLClassLoader(new URL[0], null);
        AtomicReference<Thread> made = new AtomicReference<>();
        Thread creator =
                new Thread(() -> made.set(SluiceThreads.newThread("sluice-test", () -> {})));
        creator.setContextClassLoader(job);
        creator.start();
        creator.join();

        Thread thread = made.get();
        assertThat(thread.getName()).isEqualTo("sluice-test");
        assertThat(thread.isDaemon()).isTrue();
        assertThat(thread.getContextClassLoader())
                .isSameAs(SluiceThreads.class.getClassLoader())
                .isNotSameAs(job);
        Thread fromFactory = SluiceThreads.factory("sluice-pool").newThread(() -> {});
        assertThat(fromFactory.getName()).isEqualTo("sluice-pool");
        assertThat(fromFactory.isDaemon()).isTrue();
    }

    @Test
    void aNameWithoutThePrefixIsRefused() {
        assertThatThrownBy(() -> SluiceThreads.newThread("heartbeat", () -> {}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sluice-");
        assertThatThrownBy(() -> SluiceThreads.factory("pool"))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
