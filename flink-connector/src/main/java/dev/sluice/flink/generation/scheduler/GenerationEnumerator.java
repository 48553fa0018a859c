package dev.sluice.flink.generation.scheduler;

import dev.sluice.client.job.ChunkTopics;
import dev.sluice.client.job.JobCommand;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobState;
import dev.sluice.client.job.JobStatus;
import dev.sluice.client.job.MalformedCommand;
import dev.sluice.client.job.StreamSpec;
import dev.sluice.client.job.Transport;
import dev.sluice.client.progress.DeliveryProgress;
import dev.sluice.flink.generation.ComputeTask;
import dev.sluice.flink.generation.SchedulingPolicy;
import dev.sluice.flink.generation.split.ComputeTaskSplit;
import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.SplitsAssignment;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The centralized scheduler of docs/generation.md as the GenerationSource's split enumerator. Flink
 * runs every callback of an enumerator on one thread: that is the scheduler's single event loop,
 * and job commands, delivery progress, producers asking for work, lost producers and task failures
 * are its events, handled one at a time.
 *
 * <p><b>Jobs.</b> A submission is ACCEPTED when it is valid, its id is new and fewer than {@code
 * maxJobs} jobs are live, else REFUSED with the reason. It is RUNNING once every stream has its
 * reader (the reader's first progress record), REFUSED if that takes longer than {@code
 * readerTimeout}, COMPLETED when every reader reached its stream's end, CANCELLED on request,
 * FAILED when its generator throws. Each status goes to the status topic as it happens.
 *
 * <p><b>Tasks</b> are made when a producer asks for work, which a producer does twice when it
 * starts and again each time it finishes a task: so each producer has two tasks in flight while
 * there is work, computing one while the other's chunks leave. Tasks of a lost producer come back
 * (Flink hands them back) and go out first again, whatever the room.
 *
 * <p><b>Transports.</b> Each task's way is decided when it goes out and written into its split
 * (docs/generation.md, "Transports"): {@code KAFKA} or {@code LOCAL} as its stream's transport
 * says, and for an {@code AUTO} stream {@code LOCAL} when the producer is on the output location's
 * host. A {@code LOCAL} stream's tasks go only to producers on its host. A task is done when its
 * chunks are delivered, not when they were sent (docs/generation.md, "Recovery"): a progress record
 * saying its reader was resubscribed puts the stream's undelivered tasks back to go out first,
 * unless the stream's transport is {@code KAFKA}.
 *
 * <p><b>Room admission.</b> A producer gets a new task of a stream only while fewer than {@code
 * tasksAheadPerStream} of the stream's tasks handed to it are undelivered (the stream's delivered
 * seq, the smallest of its readers', short of their last chunk), so that a stream whose readers
 * stall holds back its own tasks instead of filling its share in a sink writer, which would then
 * hold up every stream queued behind it (docs/generation.md, "Room admission"). A request that
 * finds no stream with room waits, and is answered after the poll whose progress frees room. The
 * {@link SchedulingPolicy} picks among the streams with room; the default serves paced streams
 * first and shares the rest by job weight (docs/generation.md, "Scheduling policy").
 *
 * <p><b>Speculation.</b> Producers announce a speed factor when they start and are measured task by
 * task ({@link ProducerModel}); waiting producers are answered the fastest first, and one too slow
 * for a paced stream gets none of its tasks. After every poll and every task done, a paced task
 * whose producer is slow, or that is late for its readers while the producers have spare capacity,
 * gets a duplicate that goes out first to another producer; the first complete copy wins and the
 * others are told to drop theirs ({@link Speculation}, docs/generation.md, "Speculative
 * duplicates").
 *
 * <p><b>State.</b> Checkpoints hold the live jobs with their next tasks and the tasks they handed
 * out (for the COMPLETED status's locality), and the control plane's read positions, so a
 * JobManager failover resumes the running jobs where they were. Which producer holds which
 * undelivered task is not kept: a restored scheduler starts with empty windows.
 *
 * <p><b>Chunk-topic leadership.</b> Every {@code preferredLeaderInterval}, on the control plane's
 * thread for it (not Flink's worker thread, whose polls must not wait for the Admin calls), the
 * partitions of the live jobs' chunk topics that another broker leads while their preferred one,
 * the broker on the output location's host, is in sync again are given back to it ({@link
 * PreferredLeaders}, docs/generation.md, "Chunk-topic leadership").
 */
@Internal
public final class GenerationEnumerator
        implements SplitEnumerator<ComputeTaskSplit, GenerationState> {
    private static final Logger LOG = LoggerFactory.getLogger(GenerationEnumerator.class);

    /** How the scheduler is set up. */
    public record Settings(
            int maxJobs,
            Duration readerTimeout,
            Duration pollInterval,
            Map<String, String> hosts,
            int tasksAheadPerStream,
            Map<String, Transport> transports,
            boolean speculation,
            Duration preferredLeaderInterval)
            implements Serializable {}

    private final SplitEnumeratorContext<ComputeTaskSplit> context;
    private final Supplier<ControlPlane> controlFactory;
    private final SchedulingPolicy policy;
    private final Settings settings;
    private final LongSupplier clock;
    private final Map<String, ScheduledJob> jobs = new LinkedHashMap<>();
    private final Set<String> finishedJobs = new HashSet<>();
    // Readers open before their job is submitted (it starts once every stream has one), so their
    // first progress records usually come before the job: kept for it, a reader timeout at most,
    // or the job would wait for the readers' next heartbeat, a second later.
    private final Map<String, EarlyProgress> earlyProgress = new HashMap<>();
    // Producers' unanswered requests for work, in the order they came.
    private final Map<Integer, Integer> wanting = new LinkedHashMap<>();
    private final Map<Integer, String> producerHosts = new HashMap<>();
    private final Map<Integer, Set<String>> inFlight = new HashMap<>();
    private final ProducerModel producers = new ProducerModel();
    private final Speculation speculation = new Speculation(producers);
    // Tasks to tell a producer to drop, held while it is slow: an event to a TaskManager that
    // does not answer in Flink's RPC timeout fails its task, and a paused one may resume.
    private final Map<Integer, Set<String>> dropsDue = new HashMap<>();
    private Map<String, Long> positions;
    private ControlPlane control;
    // The chunk topics of the live jobs, made anew on this thread whenever the jobs change and
    // read by the control plane's preferred-leader elections: the one thing of the scheduler's
    // they see.
    private volatile Set<String> liveChunkTopics = Set.of();

    public GenerationEnumerator(
            SplitEnumeratorContext<ComputeTaskSplit> context,
            Supplier<ControlPlane> controlFactory,
            SchedulingPolicy policy,
            Settings settings,
            LongSupplier clock,
            GenerationState restored) {
        this.context = context;
        this.controlFactory = controlFactory;
        this.policy = policy;
        this.settings = settings;
        this.clock = clock;
        this.positions = new HashMap<>(restored.positions());
        this.finishedJobs.addAll(restored.finishedJobs());
        for (GenerationState.Job job : restored.jobs()) {
            // Which producer holds which undelivered task is not in the checkpoint: the windows
            // start empty (docs/generation.md, "Room admission").
            ScheduledJob scheduled = newJob(job.spec(), job.state());
            scheduled.nextTask.putAll(job.nextTask());
            scheduled.returned.addAll(job.returned());
            scheduled.ready.addAll(job.ready());
            scheduled.tasksHandedOut = job.tasksHandedOut();
            scheduled.tasksHandedOutLocally = job.tasksHandedOutLocally();
            jobs.put(job.spec().id(), scheduled);
        }
        jobsChanged();
    }

    private ScheduledJob newJob(JobSpec spec, JobState state) {
        return new ScheduledJob(
                spec,
                state,
                clock.getAsLong(),
                settings.tasksAheadPerStream(),
                this::hostOf,
                location -> settings.transports().getOrDefault(location, Transport.AUTO));
    }

    private String hostOf(String outputLocation) {
        return settings.hosts().getOrDefault(outputLocation, outputLocation);
    }

    @Override
    public void start() {
        control = controlFactory.get();
        if (positions.isEmpty()) {
            finishedJobs.addAll(control.knownJobs());
        } else {
            control.seek(positions);
        }
        // Back to back (a period of 1 ms, which a poll outlasts): each poll returns as soon as a
        // command or progress record comes, so that a job starts when its last reader announces
        // itself, not up to a poll interval later; polls wait the interval when nothing comes.
        context.callAsync(() -> control.poll(settings.pollInterval()), this::handle, 0, 1);
        if (settings.preferredLeaderInterval().toMillis() > 0) {
            // Kafka moves leadership back to a returned broker only at its periodic rebalance,
            // up to 5 minutes later; meanwhile its output locations' chunks cross the network
            // twice (docs/generation.md, "Chunk-topic leadership").
            control.restorePreferredLeaders(
                    () -> liveChunkTopics, settings.preferredLeaderInterval());
        }
    }

    /** Hands the chunk topics of the jobs live now to the preferred-leader elections. */
    private void jobsChanged() {
        Set<String> topics = new HashSet<>();
        for (ScheduledJob job : jobs.values()) {
            topics.addAll(chunkTopics(kafkaStreams(job.spec)));
        }
        liveChunkTopics = Set.copyOf(topics);
    }

    /** One event-loop turn with what the control plane brought. */
    private void handle(ControlPlane.Batch batch, Throwable error) {
        if (error != null) {
            LOG.warn("reading the control topics failed; trying again", error);
            return;
        }
        batch.malformed().forEach(this::refuseMalformed);
        batch.commands().forEach(this::command);
        batch.progress().forEach(this::progress);
        positions = batch.positions();
        expireWaitingJobs();
        abortJobsWithSilentReaders();
        speculate();
        assign();
    }

    /**
     * Puts a duplicate of each late paced task first in its job's tasks to go out, and tells the
     * producers that are no longer slow to drop the copies that lost (docs/generation.md,
     * "Speculative duplicates").
     */
    private void speculate() {
        if (!settings.speculation()) {
            return;
        }
        long now = clock.getAsLong();
        Map<Integer, String> live = liveProducers();
        double read = 0;
        for (ScheduledJob job : jobs.values()) {
            if (job.state == JobState.RUNNING) {
                read += job.pacedReadRate();
            }
        }
        boolean spareCapacity = speculation.hasSpareCapacity(read, live.keySet(), now);
        for (ScheduledJob job : jobs.values()) {
            if (job.state != JobState.RUNNING) {
                continue;
            }
            for (var stream : job.spec.streams()) {
                if (stream.rateBytesPerSecond().isEmpty()) {
                    continue;
                }
                long rate = stream.rateBytesPerSecond().getAsLong();
                for (Speculation.Late late :
                        speculation.toDuplicate(
                                job, stream.name(), rate, live, spareCapacity, now)) {
                    LOG.info(
                            "task {} at producers {}: a duplicate goes out, {}",
                            late.held().task.id(),
                            late.held().computing,
                            late.why());
                    job.duplicate(late.held());
                }
            }
        }
        for (var due : dropsDue.entrySet()) {
            if (!due.getValue().isEmpty() && !speculation.isSlow(due.getKey(), now)) {
                for (String task : due.getValue()) {
                    context.sendEventToSourceReader(due.getKey(), new JobEvents.DropTask(task));
                }
                due.getValue().clear();
            }
        }
    }

    /** The registered producers and their hosts ("" where not known yet). */
    private Map<Integer, String> liveProducers() {
        Map<Integer, String> live = new HashMap<>();
        for (int subtask : context.registeredReaders().keySet()) {
            live.put(subtask, producerHosts.getOrDefault(subtask, ""));
        }
        return live;
    }

    /**
     * Whether {@code producer} may take the next task of paced {@code stream} of {@code job}: any
     * producer while speculation is off, else one not too slow for it (Speculation).
     */
    private boolean pacedFits(ScheduledJob job, String stream, int producer, long now) {
        if (!settings.speculation()) {
            return true;
        }
        var spec = job.spec.stream(stream).orElseThrow();
        double bufferedMillis =
                job.bufferedBytes(stream) * 1000.0 / spec.rateBytesPerSecond().getAsLong();
        return speculation.mayTakePaced(
                producer,
                job.spec.taskSizeBytes(),
                bufferedMillis,
                context.registeredReaders().keySet(),
                now);
    }

    private void refuseMalformed(MalformedCommand malformed) {
        LOG.warn("malformed command {}", malformed);
        if (!malformed.key().isEmpty()
                && !jobs.containsKey(malformed.key())
                && finishedJobs.add(malformed.key())) {
            publish(malformed.key(), JobState.REFUSED, "malformed job spec: " + malformed.reason());
        }
    }

    private void command(JobCommand command) {
        if (command instanceof JobCommand.Submit submit) {
            submit(submit.spec());
        } else if (command instanceof JobCommand.Cancel cancel) {
            end(cancel.jobId(), JobState.CANCELLED, "cancelled");
        } else if (command instanceof JobCommand.Fail fail) {
            end(fail.jobId(), JobState.FAILED, fail.reason());
        }
    }

    private void submit(JobSpec spec) {
        String id = spec.id();
        if (jobs.containsKey(id) || finishedJobs.contains(id)) {
            LOG.info("job {} was submitted before; ignoring this submission", id);
            return;
        }
        if (jobs.size() >= settings.maxJobs()) {
            finishedJobs.add(id);
            publish(id, JobState.REFUSED, "capacity exhausted: " + jobs.size() + " jobs live");
            return;
        }
        List<StreamSpec> kafkaStreams = kafkaStreams(spec);
        Set<String> topics = chunkTopics(kafkaStreams);
        Set<String> missing = control.missingTopics(topics);
        if (!missing.isEmpty()) {
            finishedJobs.add(id);
            publish(
                    id,
                    JobState.REFUSED,
                    "no chunk topic "
                            + String.join(", ", new TreeSet<>(missing))
                            + " on the cluster: create it for the output location's readers"
                            + " (docs/generation.md, \"The scheduler\")");
            return;
        }
        Optional<String> oversized =
                OversizedChunks.reason(id, kafkaStreams, control.maxMessageBytes(topics));
        if (oversized.isPresent()) {
            finishedJobs.add(id);
            publish(id, JobState.REFUSED, oversized.get());
            return;
        }
        jobs.put(id, newJob(spec, JobState.ACCEPTED));
        jobsChanged();
        publish(id, JobState.ACCEPTED, null);
        EarlyProgress early = earlyProgress.remove(id);
        if (early != null) {
            early.records().forEach(this::progress);
        }
        startIfReady(jobs.get(id));
    }

    private void progress(DeliveryProgress progress) {
        ScheduledJob job = jobs.get(progress.job());
        if (job == null) {
            if (!finishedJobs.contains(progress.job())) {
                keepEarly(progress);
            }
            return;
        }
        boolean complete = job.progress(progress, clock.getAsLong());
        if (progress.resubscribed()) {
            List<String> requeued = job.requeueUndelivered(progress.stream());
            if (!requeued.isEmpty()) {
                LOG.info(
                        "{}/{} reader {} was resubscribed: {} undelivered tasks go out again: {}",
                        progress.job(),
                        progress.stream(),
                        progress.readerIndex(),
                        requeued.size(),
                        requeued);
            }
        }
        if (job.state == JobState.ACCEPTED) {
            startIfReady(job);
        }
        if (complete && job.state == JobState.RUNNING) {
            end(job.spec.id(), JobState.COMPLETED, job.completion());
        }
    }

    private void startIfReady(ScheduledJob job) {
        if (job.state == JobState.ACCEPTED && job.allStreamsReady()) {
            job.state = JobState.RUNNING;
            publish(job.spec.id(), JobState.RUNNING, null);
        }
    }

    /**
     * The chunk topics the job's streams may be written to: all but those of streams that go the
     * local way only (docs/generation.md, "Transports").
     */
    /** The job's streams whose chunks may go through Kafka: all but the LOCAL ones. */
    private List<StreamSpec> kafkaStreams(JobSpec spec) {
        List<StreamSpec> streams = new ArrayList<>();
        for (StreamSpec stream : spec.streams()) {
            Transport location =
                    settings.transports().getOrDefault(stream.outputLocation(), Transport.AUTO);
            if (Transport.combine(spec.transport(), location) != Transport.LOCAL) {
                streams.add(stream);
            }
        }
        return streams;
    }

    private static Set<String> chunkTopics(List<StreamSpec> streams) {
        Set<String> topics = new HashSet<>();
        streams.forEach(
                stream -> topics.add(ChunkTopics.forOutputLocation(stream.outputLocation())));
        return topics;
    }

    private void keepEarly(DeliveryProgress progress) {
        EarlyProgress early =
                earlyProgress.computeIfAbsent(
                        progress.job(),
                        job -> new EarlyProgress(clock.getAsLong(), new HashMap<>()));
        // The latest record of each reader is all the job needs from it.
        early.latest().put(progress.stream() + "#" + progress.readerIndex(), progress);
    }

    /** Progress of a job not submitted yet: since when, and each reader's latest record. */
    private record EarlyProgress(long sinceMillis, Map<String, DeliveryProgress> latest) {
        Collection<DeliveryProgress> records() {
            return latest.values();
        }
    }

    private void expireWaitingJobs() {
        long now = clock.getAsLong();
        earlyProgress
                .values()
                .removeIf(early -> now - early.sinceMillis() > settings.readerTimeout().toMillis());
        for (ScheduledJob job : List.copyOf(jobs.values())) {
            if (job.state == JobState.ACCEPTED
                    && now - job.sinceMillis > settings.readerTimeout().toMillis()) {
                List<String> missing =
                        job.spec.streams().stream()
                                .filter(s -> !job.ready.contains(s.name()))
                                .map(s -> s.name() + " at " + s.outputLocation())
                                .toList();
                end(job.spec.id(), JobState.REFUSED, "no reader for " + String.join(", ", missing));
            }
        }
    }

    /**
     * A consumer that quits while a job needs it aborts the job (docs/generation.md, "The
     * scheduler"), since its stream can no longer reach its output location. The job FAILS, naming
     * the reader.
     */
    private void abortJobsWithSilentReaders() {
        long now = clock.getAsLong();
        for (ScheduledJob job : List.copyOf(jobs.values())) {
            if (job.state != JobState.RUNNING) {
                continue;
            }
            String silent = job.silentReader(now, settings.readerTimeout().toMillis());
            if (silent != null) {
                end(
                        job.spec.id(),
                        JobState.FAILED,
                        "aborted: "
                                + silent
                                + " is gone (silent for more than "
                                + settings.readerTimeout().toSeconds()
                                + " s)");
            }
        }
    }

    /** The job leaves the scheduler; its producers drop its tasks. */
    private void end(String id, JobState state, String reason) {
        ScheduledJob job = jobs.remove(id);
        if (job == null) {
            return;
        }
        jobsChanged();
        finishedJobs.add(id);
        producers.ended(id);
        publish(id, state, reason);
        if (job.duplicatesIssued > 0) {
            LOG.info(
                    "job {}: {} duplicates issued, {} won, {} bytes wasted",
                    id,
                    job.duplicatesIssued,
                    job.duplicatesWon,
                    job.bytesWasted);
        }
        if (state != JobState.COMPLETED) {
            for (int subtask : context.registeredReaders().keySet()) {
                context.sendEventToSourceReader(subtask, new JobEvents.DropJob(id));
            }
            control.release(job.ends());
        }
        inFlight.values().forEach(tasks -> tasks.removeIf(task -> task.startsWith(id + "/")));
        dropsDue.values().forEach(tasks -> tasks.removeIf(task -> task.startsWith(id + "/")));
    }

    private void publish(String id, JobState state, String reason) {
        control.publish(
                reason == null ? JobStatus.now(id, state) : JobStatus.now(id, state, reason));
    }

    @Override
    public void handleSplitRequest(int subtaskId, String requesterHostname) {
        wanting.merge(subtaskId, 1, Integer::sum);
        if (requesterHostname != null) {
            producerHosts.put(subtaskId, requesterHostname);
        }
        assign();
    }

    /**
     * Answers the producers' requests while running jobs have tasks that may go to them: a task
     * given back by a lost producer first, whatever the room, else what the policy picks among the
     * streams with room in the asking producer's window. A request that finds none stays and is
     * answered when progress frees room, after a later poll.
     */
    private void assign() {
        Map<Integer, List<ComputeTaskSplit>> assignment = new HashMap<>();
        long now = clock.getAsLong();
        Set<Integer> live = context.registeredReaders().keySet();
        boolean progress = true;
        while (progress && !wanting.isEmpty()) {
            progress = false;
            for (int subtask : byExpectedSpeed(wanting.keySet())) {
                List<ScheduledJob> runnable = new ArrayList<>();
                for (ScheduledJob job : jobs.values()) {
                    if (job.state == JobState.RUNNING && job.hasWork()) {
                        runnable.add(job);
                    }
                }
                if (runnable.isEmpty() || !context.registeredReaders().containsKey(subtask)) {
                    continue;
                }
                Set<String> tasks = inFlight.computeIfAbsent(subtask, s -> new HashSet<>());
                String host = producerHosts.getOrDefault(subtask, "");
                boolean mayTakeDuplicate = speculation.mayTakeDuplicate(subtask, live, now);
                ComputeTaskSplit split = takeReturned(runnable, host, tasks, mayTakeDuplicate);
                if (split == null) {
                    List<SchedulingPolicy.SchedulableJob> views = new ArrayList<>();
                    for (ScheduledJob job : runnable) {
                        SchedulingPolicy.SchedulableJob view =
                                job.forProducer(
                                        subtask,
                                        host,
                                        stream -> pacedFits(job, stream, subtask, now));
                        if (!view.streamsWithWork().isEmpty()) {
                            views.add(view);
                        }
                    }
                    if (views.isEmpty()) {
                        continue;
                    }
                    SchedulingPolicy.Producer producer =
                            new SchedulingPolicy.Producer(
                                    subtask, host, tasks.size(), producers.rate(subtask));
                    Optional<ComputeTask> task = policy.next(producer, views);
                    if (task.isEmpty()) {
                        continue;
                    }
                    split = new ComputeTaskSplit(task.get(), 0);
                }
                ScheduledJob owner = jobs.get(split.jobId());
                // The way is decided here, for this producer: a task given back may have gone
                // another way before (docs/generation.md, "Transports").
                split =
                        new ComputeTaskSplit(
                                split.task(),
                                split.emittedChunks(),
                                owner.transportFor(split.task().stream(), host));
                owner.handedOut(split.task(), subtask, host);
                producers.handedOut(
                        subtask, split.jobId(), split.splitId(), split.task().length(), now);
                assignment.computeIfAbsent(subtask, s -> new ArrayList<>()).add(split);
                tasks.add(split.splitId());
                if (wanting.merge(subtask, -1, Integer::sum) == 0) {
                    wanting.remove(subtask);
                }
                progress = true;
            }
        }
        if (!assignment.isEmpty()) {
            context.assignSplits(new SplitsAssignment<>(assignment));
        }
    }

    /**
     * The waiting producers, the fastest first when speculation is on (docs/generation.md,
     * "Producers of unequal speed"): a task goes to the producer expected to be done with it first.
     * Producers of the same or an unknown rate keep the order in which they asked.
     */
    private List<Integer> byExpectedSpeed(Set<Integer> waiting) {
        List<Integer> order = new ArrayList<>(waiting);
        if (settings.speculation()) {
            order.sort(Comparator.<Integer>comparingDouble(producers::rate).reversed());
        }
        return order;
    }

    /**
     * A task given back (by a lost producer, or put back after a reader was resubscribed) that may
     * go to a producer on {@code host} holding {@code held}, which goes out before any new one;
     * null if none.
     */
    private static ComputeTaskSplit takeReturned(
            List<ScheduledJob> runnable, String host, Set<String> held, boolean mayTakeDuplicate) {
        for (ScheduledJob job : runnable) {
            ComputeTaskSplit back = job.takeReturned(host, held, mayTakeDuplicate);
            if (back != null) {
                return back;
            }
        }
        return null;
    }

    @Override
    public void handleSourceEvent(int subtaskId, SourceEvent event) {
        if (event instanceof JobEvents.ProducerReady ready) {
            LOG.info(
                    "producer {} computes {} tasks at once, speed factor {}",
                    subtaskId,
                    ready.tasksInFlight(),
                    ready.speedFactor());
            producers.announced(subtaskId, ready.speedFactor());
            // A producer restored from its checkpoint computes its tasks again: those another
            // producer has a copy of need it no more.
            for (ScheduledJob job : jobs.values()) {
                for (String task : job.copiesElsewhere(subtaskId)) {
                    context.sendEventToSourceReader(subtaskId, new JobEvents.DropTask(task));
                }
            }
        } else if (event instanceof JobEvents.TaskDone done) {
            long now = clock.getAsLong();
            // A producer restored from a checkpoint may report a task before it asked for one.
            inFlight.computeIfPresent(subtaskId, (p, tasks) -> remove(tasks, done.taskId()));
            dropsDue.computeIfPresent(subtaskId, (p, tasks) -> remove(tasks, done.taskId()));
            if (done.preloadMillis() > 0) {
                LOG.info(
                        "producer {} made and preloaded the generator of job {} in {} ms",
                        subtaskId,
                        done.jobId(),
                        done.preloadMillis());
            }
            producers.done(
                    subtaskId,
                    done.jobId(),
                    done.taskId(),
                    done.isComplete(),
                    done.preloadMillis(),
                    now);
            if (!jobs.containsKey(done.jobId())) {
                // A copy that ends after its job leaves nothing of the job in the model.
                producers.ended(done.jobId());
            }
            if (!done.failure().isEmpty()) {
                end(done.jobId(), JobState.FAILED, "task " + done.taskId() + ": " + done.failure());
                return;
            }
            ScheduledJob job = jobs.get(done.jobId());
            if (job == null && finishedJobs.contains(done.jobId())) {
                // A producer restored from a checkpoint taken before its job ended computes the
                // job's tasks again: it drops the rest of them.
                context.sendEventToSourceReader(subtaskId, new JobEvents.DropJob(done.jobId()));
            }
            if (job != null) {
                for (int loser : job.taskDone(subtaskId, done)) {
                    dropsDue.computeIfAbsent(loser, s -> new HashSet<>()).add(done.taskId());
                }
                speculate();
                assign();
            }
        }
    }

    private static Set<String> remove(Set<String> tasks, String task) {
        tasks.remove(task);
        return tasks;
    }

    @Override
    public void addSplitsBack(List<ComputeTaskSplit> splits, int subtaskId) {
        LOG.info(
                "tasks back from producer {}: {}",
                subtaskId,
                splits.stream().map(ComputeTaskSplit::splitId).toList());
        wanting.remove(subtaskId);
        inFlight.remove(subtaskId);
        dropsDue.remove(subtaskId);
        producers.lost(subtaskId);
        for (ComputeTaskSplit split : splits) {
            ScheduledJob job = jobs.get(split.jobId());
            if (job != null) {
                job.givenBack(split.task(), subtaskId);
                // A duplicate of it may be waiting already: once is enough.
                if (job.returned.stream().noneMatch(r -> r.splitId().equals(split.splitId()))) {
                    job.returned.addFirst(split);
                }
            }
        }
        assign();
    }

    @Override
    public void addReader(int subtaskId) {
        assign();
    }

    @Override
    public GenerationState snapshotState(long checkpointId) {
        if (control != null) {
            control.flush();
        }
        List<GenerationState.Job> live = new ArrayList<>();
        for (ScheduledJob job : jobs.values()) {
            List<ComputeTaskSplit> back = new ArrayList<>(job.returned);
            live.add(
                    new GenerationState.Job(
                            job.spec,
                            job.state,
                            Map.copyOf(job.nextTask),
                            back,
                            Set.copyOf(job.ready),
                            job.tasksHandedOut,
                            job.tasksHandedOutLocally));
        }
        return new GenerationState(live, finishedJobs, positions);
    }

    @Override
    public void close() {
        if (control != null) {
            control.close();
        }
    }
}
