package dev.sluice.embedded.junit;

import dev.sluice.embedded.KafkaBroker;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Gives a test class a real single-node Kafka broker.
 *
 * <pre>{@code
 * @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();
 * }</pre>
 *
 * <p>One broker serves every test class of a JVM: it starts with the first class that needs it and
 * stops when JUnit closes the root store, after the last test. Tests stay independent by taking a
 * fresh topic each from {@link #createTopic(int)}.
 */
public final class KafkaBrokerExtension implements BeforeAllCallback {

    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(KafkaBrokerExtension.class);
    private static final AtomicInteger TOPICS = new AtomicInteger();

    private KafkaBroker broker;

    @Override
    public void beforeAll(ExtensionContext context) {
        broker =
                context.getRoot()
                        .getStore(NAMESPACE)
                        .getOrComputeIfAbsent(
                                KafkaBroker.class, key -> new SharedBroker(), SharedBroker.class)
                        .broker;
    }

    public KafkaBroker broker() {
        if (broker == null) {
            throw new IllegalStateException(
                    "the broker starts before all tests; register the extension on a static"
                            + " field with @RegisterExtension");
        }
        return broker;
    }

    public String bootstrapServers() {
        return broker().bootstrapServers();
    }

    /** Creates a topic with a name no other test of this JVM uses and returns that name. */
    public String createTopic(int partitions) {
        String name = "test-" + TOPICS.incrementAndGet() + "-" + ProcessHandle.current().pid();
        broker().createTopic(name, partitions);
        return name;
    }

    /** Closed by JUnit with the root store, after every test of the JVM has run. */
    private static final class SharedBroker implements AutoCloseable {
        final KafkaBroker broker = KafkaBroker.start();

        @Override
        public void close() {
            broker.close();
        }
    }
}
