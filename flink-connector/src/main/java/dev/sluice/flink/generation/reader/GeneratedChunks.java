package dev.sluice.flink.generation.reader;

import dev.sluice.flink.generation.Chunk;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import org.apache.flink.connector.base.source.reader.RecordsWithSplitIds;

/** Chunks of one task computed in one fetch, and the tasks that fetch finished. */
final class GeneratedChunks implements RecordsWithSplitIds<Chunk> {
    private final String splitId;
    private final Iterator<Chunk> chunks;
    private final Set<String> finished;
    private boolean handedOut;

    GeneratedChunks(String splitId, List<Chunk> chunks, Set<String> finished) {
        this.splitId = splitId;
        this.chunks = chunks.iterator();
        this.finished = finished;
    }

    @Override
    public String nextSplit() {
        if (handedOut || splitId == null) {
            return null;
        }
        handedOut = true;
        return splitId;
    }

    @Override
    public Chunk nextRecordFromSplit() {
        return chunks.hasNext() ? chunks.next() : null;
    }

    @Override
    public Set<String> finishedSplits() {
        return finished;
    }
}
