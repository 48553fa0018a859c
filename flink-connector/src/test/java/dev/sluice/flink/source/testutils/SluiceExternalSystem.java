package dev.sluice.flink.source.testutils;

import dev.sluice.embedded.BrokerdProcess;
import dev.sluice.embedded.KafkaBroker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.flink.connector.testframe.TestResource;

/** The external system of the connector tests: a real KRaft broker and a real sluice-brokerd. */
public final class SluiceExternalSystem implements TestResource {
    private KafkaBroker broker;
    private BrokerdProcess daemon;
    private Path dir;

    @Override
    public void startUp() throws Exception {
        broker = KafkaBroker.start();
        dir = Files.createTempDirectory("sluice-connector-test");
        daemon =
                BrokerdProcess.start(
                        BrokerdProcess.defaultBinary(),
                        broker.bootstrapServers(),
                        dir.resolve("brokerd.sock"),
                        Map.of());
    }

    @Override
    public void tearDown() throws Exception {
        if (daemon != null) {
            daemon.close();
        }
        if (broker != null) {
            broker.close();
        }
    }

    public KafkaBroker broker() {
        return broker;
    }

    public BrokerdProcess daemon() {
        return daemon;
    }

    public String bootstrapServers() {
        return broker.bootstrapServers();
    }

    public Path socket() {
        return daemon.socket();
    }
}
