package dev.sluice.flink.sink;

import dev.sluice.client.write.LocalChunkChannel;
import java.io.Serializable;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.flink.annotation.Internal;

/**
 * How a {@link SluiceSink} writer reaches the daemon of its host for the chunks that go the local
 * way (docs/sluice-sink.md, "Transports"). Paths are kept as strings: Flink ships the sink to its
 * TaskManagers by Java serialization, and a {@link Path} is not serializable.
 *
 * @param brokerdSocket the absolute path of the host's {@code sluice-brokerd} control socket
 * @param segmentDir where the writer creates its producer segments: the daemon's {@code
 *     sluice.segment.dir}, the only folder PRODUCE takes
 * @param slotCount the slots of each producer segment
 * @param reconnectTimeout how long a channel waits for the daemon to come back before the task
 *     fails
 */
@Internal
public record LocalTransportSettings(
        String brokerdSocket, String segmentDir, int slotCount, Duration reconnectTimeout)
        implements Serializable {

    static LocalTransportSettings of(Path brokerdSocket, LocalChunkChannel.Settings channel) {
        return new LocalTransportSettings(
                brokerdSocket.toString(),
                channel.segmentDir().toString(),
                channel.slotCount(),
                channel.reconnectTimeout());
    }

    public Path socket() {
        return Path.of(brokerdSocket);
    }

    public LocalChunkChannel.Settings channel() {
        return new LocalChunkChannel.Settings(Path.of(segmentDir), slotCount, reconnectTimeout);
    }
}
