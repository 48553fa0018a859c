package dev.sluice.flink.source.reader;

import dev.sluice.flink.source.ReadMode;
import dev.sluice.flink.source.SluiceDeserializationSchema;
import dev.sluice.flink.source.SluiceRecord;
import dev.sluice.flink.source.reader.pull.PullSplitReader;
import dev.sluice.flink.source.reader.push.PushInbox;
import dev.sluice.flink.source.reader.push.PushRequirements;
import dev.sluice.flink.source.reader.push.PushSplitReader;
import dev.sluice.flink.source.reader.push.PushUnavailableException;
import dev.sluice.flink.source.split.SluiceSplit;
import dev.sluice.flink.source.split.SluiceSplitState;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.base.source.reader.RecordEmitter;
import org.apache.flink.connector.base.source.reader.SingleThreadMultiplexSourceReaderBase;
import org.apache.flink.connector.base.source.reader.splitreader.SplitReader;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.SourceReaderMetricGroup;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The source reader, PUSH or PULL alike: the split reader decides where records come from. Offsets
 * are snapshotted with each checkpoint and committed to Kafka when it completes.
 */
@Internal
public final class SluiceSourceReader<T>
        extends SingleThreadMultiplexSourceReaderBase<
                SluiceRecord, T, SluiceSplit, SluiceSplitState> {
    private static final Logger LOG = LoggerFactory.getLogger(SluiceSourceReader.class);
    private final SluiceSourceReaderMetrics readerMetrics;
    private final OffsetCommitter committer;
    private final AutoCloseable onClose;
    private final SortedMap<Long, Map<TopicPartition, Long>> offsetsToCommit = new TreeMap<>();

    /**
     * A reader in the settings' mode. Before PUSH, explicit or AUTO's, checks what it needs ({@link
     * PushRequirements}): PUSH without it fails the job for good, naming what to set; AUTO reads in
     * PULL mode then, and says why at WARN. AUTO also pulls where no daemon answers.
     *
     * @throws PushUnavailableException PUSH was asked for and this process lacks what it needs
     */
    public static <T> SluiceSourceReader<T> create(
            SourceReaderContext context,
            ReaderSettings settings,
            SluiceDeserializationSchema<T> deserializer) {
        ReadMode mode = settings.mode();
        Path socket = Path.of(settings.push().socket());
        if (mode != ReadMode.PULL) {
            PushRequirements.Verdict verdict =
                    PushRequirements.check(
                            socket, ProbeTopic.of(settings, context.getIndexOfSubtask()));
            if (mode == ReadMode.PUSH && !verdict.unmet().isEmpty()) {
                throw new PushUnavailableException(socket.toString(), verdict.unmet());
            }
            if (mode == ReadMode.AUTO && !verdict.unmet().isEmpty()) {
                mode = ReadMode.PULL;
                LOG.warn(
                        "subtask {}: AUTO reads in PULL mode: PUSH through {} needs {}",
                        context.getIndexOfSubtask(),
                        socket,
                        String.join("; and ", verdict.unmet()));
            } else if (mode == ReadMode.AUTO) {
                mode = verdict.daemonAnswers() ? ReadMode.PUSH : ReadMode.PULL;
                LOG.info(
                        "subtask {}: AUTO reads in {} mode (sluice-brokerd at {} {})",
                        context.getIndexOfSubtask(),
                        mode,
                        socket,
                        mode == ReadMode.PUSH ? "answers" : "does not answer");
            }
        }
        SourceReaderMetricGroup metrics = context.metricGroup();
        MetricGroup sluice = metrics.addGroup("sluice");
        String modeName = mode.name();
        sluice.gauge("readMode", () -> modeName);
        Supplier<SplitReader<SluiceRecord, SluiceSplit>> splitReaders;
        AutoCloseable onClose;
        int subtask = context.getIndexOfSubtask();
        if (mode == ReadMode.PUSH) {
            PushInbox inbox = new PushInbox(settings.push(), settings.sourceId());
            sluice.gauge("slotsHeld", inbox::heldCount);
            splitReaders =
                    () ->
                            new PushSplitReader(
                                    inbox,
                                    new StoppingOffsetProbe(
                                            settings.kafkaProperties(),
                                            settings.clientId(subtask, "stop")));
            onClose = inbox::close;
        } else {
            sluice.gauge("slotsHeld", () -> 0);
            splitReaders =
                    () ->
                            new PullSplitReader(
                                    settings.kafkaProperties(), settings.clientId(subtask, ""));
            onClose = () -> {};
        }
        LogEndOffsets ends =
                new LogEndOffsets(settings.kafkaProperties(settings.clientId(subtask, "ends")));
        SluiceSourceReaderMetrics readerMetrics = new SluiceSourceReaderMetrics(metrics, ends::ask);
        AutoCloseable closeSplitReaders = onClose;
        onClose =
                () -> {
                    try (closeSplitReaders) {
                        ends.close();
                    }
                };
        OffsetCommitter committer =
                settings.commitOffsetsOnCheckpoint() && !settings.groupId().isEmpty()
                        ? new OffsetCommitter(
                                settings.kafkaProperties(settings.clientId(subtask, "commit")),
                                settings.groupId(),
                                readerMetrics)
                        : null;
        SluiceRecordEmitter<T> emitter =
                new SluiceRecordEmitter<>(
                        deserializer,
                        metrics.getIOMetricGroup().getNumBytesInCounter(),
                        readerMetrics);
        return new SluiceSourceReader<>(
                splitReaders,
                emitter,
                settings.readerConfiguration(),
                context,
                readerMetrics,
                committer,
                onClose);
    }

    private SluiceSourceReader(
            Supplier<SplitReader<SluiceRecord, SluiceSplit>> splitReaders,
            RecordEmitter<SluiceRecord, T, SluiceSplitState> emitter,
            Configuration configuration,
            SourceReaderContext context,
            SluiceSourceReaderMetrics readerMetrics,
            OffsetCommitter committer,
            AutoCloseable onClose) {
        super(splitReaders, emitter, configuration, context);
        this.readerMetrics = readerMetrics;
        this.committer = committer;
        this.onClose = onClose;
    }

    @Override
    protected void onSplitFinished(Map<String, SluiceSplitState> finished) {
        finished.values().forEach(state -> readerMetrics.finished(state.toSplit().partition()));
    }

    @Override
    protected SluiceSplitState initializedState(SluiceSplit split) {
        readerMetrics.reading(split);
        return new SluiceSplitState(split);
    }

    @Override
    protected SluiceSplit toSplitType(String splitId, SluiceSplitState state) {
        return state.toSplit();
    }

    @Override
    public List<SluiceSplit> snapshotState(long checkpointId) {
        List<SluiceSplit> splits = super.snapshotState(checkpointId);
        if (committer != null) {
            Map<TopicPartition, Long> offsets = new HashMap<>();
            splits.forEach(split -> offsets.put(split.partition(), split.startingOffset()));
            offsetsToCommit.put(checkpointId, offsets);
        }
        return splits;
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
        super.notifyCheckpointComplete(checkpointId);
        Map<TopicPartition, Long> offsets = offsetsToCommit.get(checkpointId);
        if (offsets != null) {
            committer.commit(offsets);
        }
        offsetsToCommit.headMap(checkpointId + 1).clear();
    }

    @Override
    public void close() throws Exception {
        try {
            super.close();
        } finally {
            try (AutoCloseable closing = onClose) {
                if (committer != null) {
                    committer.close();
                }
            }
        }
    }
}
