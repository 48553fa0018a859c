package dev.sluice.flink.source.reader;

import java.io.Serializable;
import org.apache.flink.annotation.Internal;

/**
 * Where the reader finds the local {@code sluice-brokerd} and how large a segment it asks for.
 *
 * @param maxOpenBatches batches the TaskManager's readers may hold between them: what a reader
 *     buffers at most
 */
@Internal
public record PushSettings(String socket, int slotCount, long slotSize, int maxOpenBatches)
        implements Serializable {}
