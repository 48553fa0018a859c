package dev.sluice.flink.lifecycle.userjar;

import dev.sluice.flink.lifecycle.UserCodeLoaders;
import dev.sluice.flink.source.SluiceDeserializationSchema;
import dev.sluice.flink.source.SluiceRecord;
import dev.sluice.flink.source.SluiceSource;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.util.Collector;

/**
 * Counts the source job's records, then holds the task (and so the batches its reader holds) on the
 * test's gate: the job is cancelled with shares of the shared records subscription's batches out.
 * Deserialized on the JobManager (the source's enumerator) and on the TaskManager (its readers).
 */
public final class CountingSchema implements SluiceDeserializationSchema<Long> {
    private static final long serialVersionUID = 1L;

    static {
        UserCodeLoaders.record(CountingSchema.class);
        // Resolved by the same loader, child-first: Sluice's own classes come from the jar too.
        UserCodeLoaders.record(SluiceSource.class);
    }

    private final long holdAfter;

    public CountingSchema(long holdAfter) {
        this.holdAfter = holdAfter;
    }

    @Override
    public void deserialize(SluiceRecord record, Collector<Long> out) {
        if (UserCodeLoaders.RECORDS.incrementAndGet() >= holdAfter) {
            try {
                UserCodeLoaders.gate.await();
            } catch (InterruptedException e) {
                // Cancelled: Flink interrupts the task thread.
                Thread.currentThread().interrupt();
                return;
            }
        }
        out.collect(record.offset());
    }

    @Override
    public TypeInformation<Long> getProducedType() {
        return Types.LONG;
    }
}
