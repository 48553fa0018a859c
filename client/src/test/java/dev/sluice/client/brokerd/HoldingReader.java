package dev.sluice.client.brokerd;

import dev.sluice.client.protocol.PartitionStart;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A reader process for {@link BrokerdClientIT}: subscribes to one partition, takes a batch and
 * holds it without releasing, says so on stdout, and waits to be killed.
 *
 * <p>Arguments: socket path, topic, partition.
 */
public final class HoldingReader {
    private HoldingReader() {}

    public static void main(String[] args) throws Exception {
        BrokerdClient client = BrokerdClient.builder(Path.of(args[0])).build();
        RecordsSubscription subscription =
                client.subscribe(
                        SubscriptionRequest.builder(args[1])
                                .partition(PartitionStart.earliest(Integer.parseInt(args[2])))
                                .slots(2, 4096)
                                .build());
        RecordBatch held = null;
        while (held == null) {
            held = subscription.poll(Duration.ofSeconds(1));
        }
        System.out.println("holding " + subscription.partitions() + " " + held.rowCount());
        System.out.flush();
        Thread.currentThread().join();
    }
}
