package dev.sluice.flink.source.reader.push;

import java.io.Serializable;
import org.apache.flink.annotation.Internal;

/**
 * Where the reader finds the local {@code sluice-brokerd} and how large a segment it asks for.
 *
 * @param maxOpenBatches batches the TaskManager's readers may hold between them: what a reader
 *     buffers at most
 * @param readUncommitted the source's {@code isolation.level} is read_uncommitted: the
 *     subscription's SUBSCRIBE flag, as the PULL consumers' property
 */
@Internal
public record PushSettings(
        String socket, int slotCount, long slotSize, int maxOpenBatches, boolean readUncommitted)
        implements Serializable {}
