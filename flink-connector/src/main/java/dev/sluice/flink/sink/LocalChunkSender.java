package dev.sluice.flink.sink;

import dev.sluice.client.brokerd.BrokerdClient;
import dev.sluice.client.write.LocalChunkChannel;
import java.io.IOException;
import java.util.Set;

/**
 * What a {@link SluiceSinkWriter} needs of the local channel of one chunk topic: a {@link
 * LocalChunkChannel} in a job, one of the test's own where no daemon runs.
 */
interface LocalChunkSender extends AutoCloseable {

    /** {@link LocalChunkChannel#send}: once it returns the chunk is in shared memory. */
    void send(String job, String stream, long seq, boolean eos, byte[] payload)
            throws IOException, InterruptedException;

    /** {@link LocalChunkChannel#takeLostStreams}: the streams whose chunks sent may be lost. */
    Set<String> takeLostStreams();

    @Override
    void close() throws IOException;

    /** Opens the channel of a chunk topic; {@code onLoss} is called from any thread. */
    @FunctionalInterface
    interface Opener {
        LocalChunkSender open(String topic, Runnable onLoss) throws IOException;
    }

    /** Channels over one client of the host's daemon, each with the same settings. */
    static Opener channels(BrokerdClient brokerd, LocalChunkChannel.Settings settings) {
        return (topic, onLoss) -> {
            LocalChunkChannel channel = LocalChunkChannel.open(brokerd, topic, settings, onLoss);
            return new LocalChunkSender() {
                @Override
                public void send(String job, String stream, long seq, boolean eos, byte[] payload)
                        throws IOException, InterruptedException {
                    channel.send(job, stream, seq, eos, payload);
                }

                @Override
                public Set<String> takeLostStreams() {
                    return channel.takeLostStreams();
                }

                @Override
                public void close() throws IOException {
                    channel.close();
                }
            };
        };
    }
}
