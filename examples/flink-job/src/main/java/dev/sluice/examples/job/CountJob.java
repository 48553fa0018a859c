package dev.sluice.examples.job;

import dev.sluice.flink.source.ReadMode;
import dev.sluice.flink.source.SluiceDeserializationSchema;
import dev.sluice.flink.source.SluiceOffsets;
import dev.sluice.flink.source.SluiceRecord;
import dev.sluice.flink.source.SluiceSource;
import dev.sluice.flink.source.SluiceSourceBuilder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts the records of a Kafka topic, read through Sluice from the earliest offsets to the end
 * offsets the job found when it started. The counts are Flink accumulators: {@code records} (all
 * partitions) and {@code records-partition-N}; a partition without records has none. Submitted
 * through the REST API, they are at {@code GET /jobs/<id>/accumulators} once the job is FINISHED;
 * {@code flink run} prints them.
 *
 * <p>It survives faults, as a job to copy must: it checkpoints (every second unless told) and
 * restarts from its last checkpoint without limit, so a TaskManager, a daemon or a broker lost
 * mid-job costs a restart, not the count. The counts are checkpointed state, not only accumulators,
 * which a restarted task would begin again from zero; each subtask hands its counts to the
 * accumulators once it has read its partitions to their end.
 *
 * <pre>
 * CountJob --bootstrap-servers HOST:PORT --topic TOPIC [--mode PUSH|PULL|AUTO]
 *          [--brokerd-socket PATH] [--parallelism N] [--checkpoint-interval MS]
 * </pre>
 */
public final class CountJob {
    static final String USAGE =
            "usage: CountJob --bootstrap-servers HOST:PORT --topic TOPIC [--mode PUSH|PULL|AUTO]"
                    + " [--brokerd-socket PATH] [--parallelism N] [--checkpoint-interval MS]";
    static final String RECORDS = "records";
    static final String PARTITION_PREFIX = "records-partition-";

    private static final Logger LOG = LoggerFactory.getLogger(CountJob.class);

    /** The job's arguments, checked. */
    record Args(
            String bootstrapServers,
            String topic,
            ReadMode mode,
            Path socket,
            Integer parallelism,
            Duration checkpointInterval) {

        static Args parse(String[] args) {
            Map<String, String> values = new TreeMap<>();
            for (int i = 0; i < args.length; i += 2) {
                String name = args[i];
                if (!name.matches(
                        "--(bootstrap-servers|topic|mode|brokerd-socket|parallelism"
                                + "|checkpoint-interval)")) {
                    throw new IllegalArgumentException("unknown argument " + name);
                }
                if (i + 1 == args.length || args[i + 1].isBlank()) {
                    throw new IllegalArgumentException(name + " needs a value");
                }
                values.put(name, args[i + 1]);
            }
            for (String required : new String[] {"--bootstrap-servers", "--topic"}) {
                if (!values.containsKey(required)) {
                    throw new IllegalArgumentException(required + " is required");
                }
            }
            String mode = values.getOrDefault("--mode", "AUTO");
            if (!mode.matches("PUSH|PULL|AUTO")) {
                throw new IllegalArgumentException("--mode " + mode + ": PUSH, PULL or AUTO");
            }
            Integer parallelism = null;
            if (values.containsKey("--parallelism")) {
                String n = values.get("--parallelism");
                if (!n.matches("[1-9][0-9]{0,5}")) {
                    throw new IllegalArgumentException("--parallelism " + n + ": a number ≥ 1");
                }
                parallelism = Integer.parseInt(n);
            }
            String interval = values.getOrDefault("--checkpoint-interval", "1000");
            if (!interval.matches("[1-9][0-9]{1,8}")) {
                throw new IllegalArgumentException(
                        "--checkpoint-interval " + interval + ": milliseconds, 10 or more");
            }
            return new Args(
                    values.get("--bootstrap-servers"),
                    values.get("--topic"),
                    ReadMode.valueOf(mode),
                    Path.of(
                            values.getOrDefault(
                                    "--brokerd-socket", SluiceSourceBuilder.DEFAULT_SOCKET)),
                    parallelism,
                    Duration.ofMillis(Long.parseLong(interval)));
        }
    }

    public static void main(String[] arguments) throws Exception {
        Args args;
        try {
            args = Args.parse(arguments);
        } catch (IllegalArgumentException e) {
            // Thrown, not System.exit: submitted through the REST API, main runs inside the
            // JobManager. `flink run` prints the message and exits with status 1.
            throw new IllegalArgumentException(e.getMessage() + "\n" + USAGE, e);
        }

        SluiceSource<Integer> source =
                SluiceSource.<Integer>builder()
                        .setBootstrapServers(args.bootstrapServers())
                        .setTopics(args.topic())
                        .setReadMode(args.mode())
                        .setBrokerdSocket(args.socket())
                        .setStartingOffsets(SluiceOffsets.earliest())
                        // Bounded: each partition stops at its end offset when the job starts.
                        .setBounded(SluiceOffsets.latest())
                        .setDeserializer(new PartitionOf())
                        .build();

        // Checkpoints keep the source's offsets and the counts; a failure restarts the job from
        // the last one, after 1 s, then 2, 4, ... up to a minute, without limit (Flink's
        // exponential delay), so that a host cut off for a minute is waited out. Without
        // checkpoints Flink does not restart a job at all.
        Configuration conf = new Configuration();
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, args.checkpointInterval());
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "exponential-delay");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        if (args.parallelism() != null) {
            env.setParallelism(args.parallelism());
        }
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "sluice: " + args.topic())
                .flatMap(new CountPerPartition())
                .name("count")
                .sinkTo(new DiscardingSink<>());

        JobExecutionResult result = env.execute("sluice-count " + args.topic());
        // Detached (the REST API's /jars/<id>/run): the job runs on; its accumulators are read
        // from the REST API once it is done.
        if (result.isJobExecutionResult()) {
            Map<String, Object> counts = new TreeMap<>(result.getAllAccumulatorResults());
            System.out.println("topic " + args.topic() + ": " + counts);
        }
    }

    /** Each record becomes its partition number; the value is not even copied. */
    static final class PartitionOf implements SluiceDeserializationSchema<Integer> {
        private static final long serialVersionUID = 1L;

        @Override
        public void deserialize(SluiceRecord record, Collector<Integer> out) {
            out.collect(record.partition());
        }

        @Override
        public TypeInformation<Integer> getProducedType() {
            return Types.INT;
        }
    }

    /**
     * Counts per partition in checkpointed state, restored after a failure with the source's
     * offsets; emits nothing. At its end a subtask adds its counts to the accumulators, which Flink
     * adds up over the subtasks. A subtask's counts are one list element, so a job restored at
     * another parallelism adds up the same.
     */
    static final class CountPerPartition extends RichFlatMapFunction<Integer, Void>
            implements CheckpointedFunction {
        private static final long serialVersionUID = 1L;

        private transient Map<Integer, Long> counts;
        private transient ListState<Map<Integer, Long>> state;

        @Override
        public void initializeState(FunctionInitializationContext context) throws Exception {
            state =
                    context.getOperatorStateStore()
                            .getListState(
                                    new ListStateDescriptor<>(
                                            "counts", Types.MAP(Types.INT, Types.LONG)));
            counts = new TreeMap<>();
            for (Map<Integer, Long> restored : state.get()) {
                restored.forEach((p, n) -> counts.merge(p, n, Long::sum));
            }
        }

        @Override
        public void snapshotState(FunctionSnapshotContext context) throws Exception {
            state.update(List.of(new TreeMap<>(counts)));
        }

        @Override
        public void flatMap(Integer partition, Collector<Void> out) {
            counts.merge(partition, 1L, Long::sum);
        }

        /**
         * The subtask's end: after its input ended, its counts are whole. (A failed attempt also
         * closes, and its accumulators are not the job's: the attempt that restarts is.)
         */
        @Override
        public void close() {
            LongCounter total = new LongCounter();
            getRuntimeContext().addAccumulator(RECORDS, total);
            counts.forEach(
                    (p, n) -> {
                        LongCounter partition = new LongCounter(n);
                        getRuntimeContext().addAccumulator(PARTITION_PREFIX + p, partition);
                        total.add(n);
                    });
            LOG.info(
                    "subtask {}: {} records, per partition {}",
                    getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                    total.getLocalValue(),
                    counts);
        }
    }
}
