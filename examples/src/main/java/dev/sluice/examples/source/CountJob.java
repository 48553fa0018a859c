package dev.sluice.examples.source;

import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;

/**
 * Count: reads every record and counts it, emitting nothing, the lightest job a source can feed
 * (examples/README.md). The count is the Flink accumulator {@link #RECORDS}, summed over the
 * subtasks.
 */
public final class CountJob {
    public static final String RECORDS = "records";

    private CountJob() {}

    /** The pipeline on a stream of values: counts each into {@link #RECORDS}. */
    public static DataStream<Void> count(DataStream<byte[]> values) {
        return values.flatMap(new Count()).name("count");
    }

    /** Runs the pipeline to the end of {@code values}' bounded source: the records it read. */
    public static long run(StreamExecutionEnvironment env, DataStream<byte[]> values)
            throws Exception {
        count(values).sinkTo(new DiscardingSink<>());
        Long records = env.execute("count").getAccumulatorResult(RECORDS);
        return records == null ? 0 : records;
    }

    /** Counts into an accumulator that Flink adds up over the subtasks. */
    static final class Count extends RichFlatMapFunction<byte[], Void> {
        private static final long serialVersionUID = 1L;

        private transient LongCounter records;

        @Override
        public void open(OpenContext context) {
            records = new LongCounter();
            getRuntimeContext().addAccumulator(RECORDS, records);
        }

        @Override
        public void flatMap(byte[] value, Collector<Void> out) {
            records.add(1);
        }
    }
}
