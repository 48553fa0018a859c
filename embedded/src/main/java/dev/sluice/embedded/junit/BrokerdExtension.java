package dev.sluice.embedded.junit;

import dev.sluice.embedded.BrokerdProcess;
import dev.sluice.embedded.Directories;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Gives a test class a real {@code sluice-brokerd} on the broker of a {@link KafkaBrokerExtension},
 * started before its tests and stopped after them, its socket in a directory of its own.
 *
 * <pre>{@code
 * @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();
 * @RegisterExtension static final BrokerdExtension BROKERD = new BrokerdExtension(KAFKA);
 * }</pre>
 *
 * <p>Tests that restart or configure daemons of their own start {@link BrokerdProcess}es directly.
 */
public final class BrokerdExtension implements BeforeAllCallback, AfterAllCallback {
    private final KafkaBrokerExtension kafka;
    private Path dir;
    private BrokerdProcess daemon;

    public BrokerdExtension(KafkaBrokerExtension kafka) {
        this.kafka = kafka;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws IOException {
        // The broker first, whatever the order JUnit registers the two in.
        kafka.beforeAll(context);
        dir = Files.createTempDirectory("sluice-brokerd-test-");
        daemon =
                BrokerdProcess.start(
                        BrokerdProcess.defaultBinary(),
                        kafka.bootstrapServers(),
                        dir.resolve("brokerd.sock"),
                        Map.of());
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        try {
            if (daemon != null) {
                daemon.close();
            }
        } finally {
            Directories.deleteRecursively(dir);
        }
    }

    public BrokerdProcess daemon() {
        if (daemon == null) {
            throw new IllegalStateException(
                    "the daemon starts before all tests; register the extension on a static"
                            + " field with @RegisterExtension");
        }
        return daemon;
    }

    /** The daemon's Unix socket. */
    public Path socket() {
        return daemon().socket();
    }
}
