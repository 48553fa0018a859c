package dev.sluice.flink.generation.scheduler;

import dev.sluice.client.job.JobCommand;
import dev.sluice.client.job.JobState;
import dev.sluice.client.job.JobStatus;
import dev.sluice.client.job.MalformedCommand;
import dev.sluice.client.progress.DeliveryProgress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/** The scheduler's control plane in memory, for tests of its decisions. */
final class FakeControlPlane implements ControlPlane {
    final List<JobCommand> commands = new ArrayList<>();
    final List<MalformedCommand> malformed = new ArrayList<>();
    final List<DeliveryProgress> progress = new ArrayList<>();
    final List<JobStatus> published = new ArrayList<>();
    final List<DeliveryProgress> released = new ArrayList<>();
    // The topics the cluster does not have.
    final Set<String> missing = new HashSet<>();
    // The max.message.bytes of the topics that have one here.
    final Map<String, Integer> maxMessageBytes = new HashMap<>();
    Map<String, Long> seeked = Map.of();
    // What restorePreferredLeaders was given: null until it is called, and after close.
    Supplier<Set<String>> leaderTopics;
    Duration leaderInterval;
    long polls;
    // How many of the published statuses a flush covered.
    int flushedStatuses;

    @Override
    public Set<String> knownJobs() {
        return Set.of("old-job");
    }

    @Override
    public Set<String> missingTopics(Set<String> topics) {
        return topics.stream().filter(missing::contains).collect(Collectors.toSet());
    }

    @Override
    public Map<String, Integer> maxMessageBytes(Set<String> topics) {
        Map<String, Integer> limits = new HashMap<>(maxMessageBytes);
        limits.keySet().retainAll(topics);
        return limits;
    }

    @Override
    public void seek(Map<String, Long> positions) {
        seeked = positions;
    }

    @Override
    public synchronized Batch poll(Duration timeout) {
        polls++;
        Batch batch =
                new Batch(
                        List.copyOf(commands),
                        List.copyOf(malformed),
                        List.copyOf(progress),
                        new HashMap<>(Map.of("sluice-jobs-0", polls)));
        commands.clear();
        malformed.clear();
        progress.clear();
        return batch;
    }

    @Override
    public synchronized void restorePreferredLeaders(
            Supplier<Set<String>> chunkTopics, Duration interval) {
        leaderTopics = chunkTopics;
        leaderInterval = interval;
    }

    @Override
    public void publish(JobStatus status) {
        published.add(status);
    }

    @Override
    public void flush() {
        flushedStatuses = published.size();
    }

    @Override
    public void release(List<DeliveryProgress> ends) {
        released.addAll(ends);
    }

    List<JobState> states(String jobId) {
        return published.stream()
                .filter(s -> s.jobId().equals(jobId))
                .map(JobStatus::state)
                .toList();
    }

    String reason(String jobId, JobState state) {
        return published.stream()
                .filter(s -> s.jobId().equals(jobId) && s.state() == state)
                .findFirst()
                .flatMap(JobStatus::reason)
                .orElse("");
    }

    @Override
    public synchronized void close() {
        // As the real one's elections end with it; the tests reuse the fake after a close.
        leaderTopics = null;
        leaderInterval = null;
    }
}
