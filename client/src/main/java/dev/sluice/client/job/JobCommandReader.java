package dev.sluice.client.job;

import dev.sluice.client.annotation.PublicEvolving;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler's side of the jobs topic: decodes {@link JobCommand}s from a consumer the caller
 * has assigned (the caller owns the offsets, which a checkpointing scheduler keeps itself).
 *
 * <p>A record that is not a valid command is never dropped silently: it is counted, handed to the
 * handler with its partition and offset, and reading goes on with the next record, so one bad
 * submission disturbs no other job. A record is malformed when its value is not a command as {@link
 * JobCommandJson} reads it, or when its key is not the command's job id (the key is what keeps one
 * job's commands in order).
 */
@PublicEvolving
public final class JobCommandReader implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(JobCommandReader.class);

    private final org.apache.kafka.clients.consumer.Consumer<byte[], byte[]> consumer;
    private final Consumer<MalformedCommand> onMalformed;
    private long malformedCount;

    /** A reader that logs malformed records as warnings. */
    public JobCommandReader(org.apache.kafka.clients.consumer.Consumer<byte[], byte[]> consumer) {
        this(consumer, malformed -> LOG.warn("malformed job command at {}", malformed));
    }

    public JobCommandReader(
            org.apache.kafka.clients.consumer.Consumer<byte[], byte[]> consumer,
            Consumer<MalformedCommand> onMalformed) {
        this.consumer = Objects.requireNonNull(consumer);
        this.onMalformed = Objects.requireNonNull(onMalformed);
    }

    /** The valid commands among the records one poll of the consumer returns, in their order. */
    public List<JobCommand> poll(Duration timeout) {
        return decode(consumer.poll(timeout));
    }

    /**
     * The valid commands among {@code records}, in their order: for a caller that polls the
     * consumer itself, because it reads other topics with it too, and passes the jobs topic's
     * records.
     */
    public List<JobCommand> decode(Iterable<ConsumerRecord<byte[], byte[]>> records) {
        List<JobCommand> commands = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> record : records) {
            try {
                commands.add(decode(record));
            } catch (JobSpecException e) {
                malformedCount++;
                onMalformed.accept(
                        new MalformedCommand(
                                record.topic(),
                                record.partition(),
                                record.offset(),
                                record.key() == null
                                        ? ""
                                        : new String(record.key(), StandardCharsets.UTF_8),
                                e.getMessage()));
            }
        }
        return commands;
    }

    /** How many malformed records this reader has met. */
    public long malformedCount() {
        return malformedCount;
    }

    @Override
    public void close() {
        consumer.close();
    }

    private static JobCommand decode(ConsumerRecord<byte[], byte[]> record) {
        if (record.value() == null) {
            throw new JobSpecException("", "the record has no value");
        }
        JobCommand command = JobCommandJson.parse(record.value());
        String key = record.key() == null ? null : new String(record.key(), StandardCharsets.UTF_8);
        if (!command.jobId().equals(key)) {
            throw new JobSpecException(
                    "",
                    "the record's key "
                            + (key == null ? "is missing" : "'" + key + "'")
                            + ", not the job id '"
                            + command.jobId()
                            + "'");
        }
        return command;
    }
}
