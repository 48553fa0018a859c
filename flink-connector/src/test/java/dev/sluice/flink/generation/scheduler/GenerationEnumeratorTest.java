package dev.sluice.flink.generation.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.client.job.JobCommand;
import dev.sluice.client.job.JobSpec;
import dev.sluice.client.job.JobState;
import dev.sluice.client.job.MalformedCommand;
import dev.sluice.client.job.Transport;
import dev.sluice.client.progress.DeliveryProgress;
import dev.sluice.client.write.ChunkRecords;
import dev.sluice.flink.generation.TestJobs;
import dev.sluice.flink.generation.split.ComputeTaskSplit;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.flink.connector.testutils.source.reader.TestingSplitEnumeratorContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The scheduler's decisions, driven event by event through Flink's testing enumerator context. */
class GenerationEnumeratorTest {
    private final FakeControlPlane control = new FakeControlPlane();
    private final AtomicLong clock = new AtomicLong(1_000);
    private TestingSplitEnumeratorContext<ComputeTaskSplit> context;
    private GenerationEnumerator scheduler;

    private static final GenerationEnumerator.Settings SETTINGS =
            new GenerationEnumerator.Settings(
                    2,
                    Duration.ofSeconds(5),
                    Duration.ofMillis(100),
                    Map.of("node-1", "host-b"),
                    2,
                    Map.of(),
                    true,
                    Duration.ofSeconds(5));

    @BeforeEach
    void start() {
        context = new TestingSplitEnumeratorContext<>(3);
        scheduler = started(GenerationState.empty());
    }

    private GenerationEnumerator started(GenerationState state) {
        return started(state, SETTINGS);
    }

    private GenerationEnumerator started(
            GenerationState state, GenerationEnumerator.Settings settings) {
        GenerationEnumerator enumerator =
                new GenerationEnumerator(
                        context, () -> control, new OnDemandPolicy(), settings, clock::get, state);
        enumerator.start();
        for (int subtask = 0; subtask < 3; subtask++) {
            context.registerReader(subtask, "host-" + (char) ('a' + subtask));
            enumerator.addReader(subtask);
        }
        return enumerator;
    }

    @AfterEach
    void close() throws Exception {
        scheduler.close();
    }

    /** One turn of the scheduler's loop: what the control plane has is handled. */
    private void turn() {
        context.triggerAllActions();
    }

    /** A job of two streams (c0 to node-0, c1 to node-1), 4 tasks each of 2 chunks. */
    private static JobSpec job(String id) {
        return TestJobs.job(id, 2, 8 * 1024, 2 * 1024, 1024, Object.class, Map.of());
    }

    private void submitAndStart(JobSpec job) {
        control.commands.add(new JobCommand.Submit(job));
        for (var stream : job.streams()) {
            control.progress.add(new DeliveryProgress(job.id(), stream.name(), 0, 1, -1, 0, false));
        }
        turn();
    }

    private List<String> tasksOf(int subtask) {
        var assignment = context.getSplitAssignments().get(subtask);
        return assignment == null
                ? List.of()
                : assignment.getAssignedSplits().stream().map(ComputeTaskSplit::splitId).toList();
    }

    @Test
    void aJobStartsWhenEveryStreamHasItsReaderAndTasksGoOutOnDemand() {
        JobSpec job = job("print-1");
        control.commands.add(new JobCommand.Submit(job));
        control.progress.add(new DeliveryProgress("print-1", "c0", 0, 1, -1, 0, false));
        turn();
        assertThat(control.states("print-1")).containsExactly(JobState.ACCEPTED);

        scheduler.handleSplitRequest(0, "host-a");
        assertThat(tasksOf(0)).as("no task before the job runs").isEmpty();

        control.progress.add(new DeliveryProgress("print-1", "c1", 0, 1, -1, 0, false));
        turn();
        assertThat(control.states("print-1")).containsExactly(JobState.ACCEPTED, JobState.RUNNING);
        assertThat(tasksOf(0)).as("the waiting request is answered").hasSize(1);

        scheduler.handleSplitRequest(0, "host-a");
        scheduler.handleSplitRequest(1, "host-b");
        assertThat(tasksOf(0)).hasSize(2);
        // host-b is node-1's host: its producer gets c1's tasks first.
        assertThat(tasksOf(1)).hasSize(1).allMatch(task -> task.startsWith("print-1/c1/"));
    }

    @Test
    void readersThatAnnouncedThemselvesBeforeTheSubmissionStartTheJobAtOnce() {
        for (String stream : List.of("c0", "c1")) {
            control.progress.add(new DeliveryProgress("early", stream, 0, 1, -1, 0, false));
        }
        turn();
        control.commands.add(new JobCommand.Submit(job("early")));
        turn();
        assertThat(control.states("early")).containsExactly(JobState.ACCEPTED, JobState.RUNNING);

        // Announcements older than the reader timeout are forgotten: the job waits for readers.
        control.progress.add(new DeliveryProgress("late", "c0", 0, 1, -1, 0, false));
        control.progress.add(new DeliveryProgress("late", "c1", 0, 1, -1, 0, false));
        turn();
        clock.addAndGet(SETTINGS.readerTimeout().toMillis() + 1);
        turn();
        control.commands.add(new JobCommand.Submit(job("late")));
        turn();
        assertThat(control.states("late")).containsExactly(JobState.ACCEPTED);
    }

    @Test
    void concurrentJobsTakeTurns() {
        submitAndStart(job("a"));
        submitAndStart(job("b"));
        for (int i = 0; i < 4; i++) {
            scheduler.handleSplitRequest(2, "host-c");
        }
        assertThat(tasksOf(2))
                .extracting(task -> task.substring(0, 1))
                .containsExactly("a", "b", "a", "b");
    }

    @Test
    void refusesBeyondCapacityWithoutReadersAndMalformedSpecs() {
        submitAndStart(job("one"));
        submitAndStart(job("two"));
        control.commands.add(new JobCommand.Submit(job("three")));
        control.malformed.add(
                new MalformedCommand("sluice-jobs", 0, 9, "bad", "$.streams: missing"));
        turn();
        assertThat(control.states("three")).containsExactly(JobState.REFUSED);
        assertThat(control.reason("three", JobState.REFUSED)).contains("capacity");
        assertThat(control.reason("bad", JobState.REFUSED)).contains("$.streams: missing");

        control.commands.add(new JobCommand.Cancel("one"));
        turn();
        control.commands.add(new JobCommand.Submit(job("lonely")));
        turn();
        clock.addAndGet(6_000);
        turn();
        assertThat(control.states("lonely")).containsExactly(JobState.ACCEPTED, JobState.REFUSED);
        assertThat(control.reason("lonely", JobState.REFUSED))
                .contains("c0 at node-0", "c1 at node-1");
    }

    @Test
    void aSubmissionSeenBeforeIsIgnored() {
        control.commands.add(new JobCommand.Submit(job("old-job")));
        turn();
        assertThat(control.published).isEmpty();
    }

    @Test
    void aFailingTaskFailsItsJobOnlyAndCancellingDropsTheTasks() {
        submitAndStart(job("good"));
        submitAndStart(job("bad"));
        scheduler.handleSplitRequest(0, "host-a");
        scheduler.handleSplitRequest(0, "host-a");
        scheduler.handleSourceEvent(
                0, new JobEvents.TaskDone("bad", "bad/c0/0", "boom", 0, false, 0));
        assertThat(control.states("bad")).endsWith(JobState.FAILED);
        assertThat(control.reason("bad", JobState.FAILED)).contains("bad/c0/0", "boom");
        assertThat(context.getSentEvents().get(0)).contains(new JobEvents.DropJob("bad"));

        for (int i = 0; i < 3; i++) {
            scheduler.handleSplitRequest(1, "host-z");
        }
        assertThat(tasksOf(1)).allMatch(task -> task.startsWith("good/"));
        assertThat(control.states("good")).containsExactly(JobState.ACCEPTED, JobState.RUNNING);
    }

    @Test
    void aJobCompletesWhenEveryReaderOfEveryStreamReachedItsEnd() {
        JobSpec job = job("done");
        submitAndStart(job);
        control.progress.add(new DeliveryProgress("done", "c0", 0, 1, 7, 8192, true));
        turn();
        assertThat(control.states("done")).doesNotContain(JobState.COMPLETED);
        control.progress.add(new DeliveryProgress("done", "c1", 0, 1, 7, 8192, true));
        turn();
        assertThat(control.states("done")).endsWith(JobState.COMPLETED);
        assertThat(control.reason("done", JobState.COMPLETED))
                .as("no task was counted: no locality rather than \"0 of 0\"")
                .isEmpty();
    }

    @Test
    void theCompletedStatusSaysHowManyTasksWereComputedOnTheirOutputLocationsHost() {
        JobSpec job = job("placed");
        submitAndStart(job);
        // host-b is node-1's host: its producer gets c1's task; host-a is no stream's host.
        scheduler.handleSplitRequest(1, "host-b");
        scheduler.handleSplitRequest(0, "host-a");
        scheduler.handleSplitRequest(0, "host-a");
        assertThat(tasksOf(1)).singleElement().asString().contains("c1");
        control.progress.add(new DeliveryProgress("placed", "c0", 0, 1, 7, 8192, true));
        control.progress.add(new DeliveryProgress("placed", "c1", 0, 1, 7, 8192, true));
        turn();
        assertThat(control.reason("placed", JobState.COMPLETED))
                .isEqualTo("1 of 3 tasks computed on their output location's host");
    }

    @Test
    void theCompletedStatusCountsTheTasksHandedOutBeforeAndAfterARestore() throws Exception {
        submitAndStart(job("moved"));
        // Before the checkpoint: c1/0 to host-b, its output location's host; c0/0 and c1/1 (the
        // streams take turns) to host-a, no stream's host.
        scheduler.handleSplitRequest(1, "host-b");
        scheduler.handleSplitRequest(0, "host-a");
        scheduler.handleSplitRequest(0, "host-a");
        GenerationState state = restoredFrom(scheduler.snapshotState(1));
        assertThat(state.jobs())
                .singleElement()
                .extracting(
                        GenerationState.Job::tasksHandedOut,
                        GenerationState.Job::tasksHandedOutLocally)
                .containsExactly(3, 1);

        // After the restore: the two c1 tasks left to host-b, the three c0 tasks left to host-c,
        // the third once c0/1 is delivered (two undelivered tasks of a stream per producer).
        scheduler.handleSplitRequest(1, "host-b");
        scheduler.handleSplitRequest(1, "host-b");
        for (int i = 0; i < 3; i++) {
            scheduler.handleSplitRequest(2, "host-c");
        }
        control.progress.add(new DeliveryProgress("moved", "c0", 0, 1, 3, 4096, false));
        turn();
        assertThat(tasksOf(1)).containsExactly("moved/c1/2", "moved/c1/3");
        assertThat(tasksOf(2)).containsExactly("moved/c0/1", "moved/c0/2", "moved/c0/3");
        control.progress.add(new DeliveryProgress("moved", "c0", 0, 1, 7, 8192, true));
        control.progress.add(new DeliveryProgress("moved", "c1", 0, 1, 7, 8192, true));
        turn();

        assertThat(control.reason("moved", JobState.COMPLETED))
                .isEqualTo("3 of 8 tasks computed on their output location's host");
    }

    @Test
    void aJobRestoredWithoutItsTaskCountsCompletesWithoutALocality() throws Exception {
        submitAndStart(job("older"));
        scheduler.handleSplitRequest(1, "host-b");
        scheduler.handleSplitRequest(0, "host-a");
        GenerationState snapshot = scheduler.snapshotState(1);
        // As a version-1 state restores: the counts are 0, the 2 tasks handed out uncounted.
        GenerationState version1 =
                new GenerationState(
                        snapshot.jobs().stream()
                                .map(
                                        job ->
                                                new GenerationState.Job(
                                                        job.spec(),
                                                        job.state(),
                                                        job.nextTask(),
                                                        job.returned(),
                                                        job.ready(),
                                                        0,
                                                        0))
                                .toList(),
                        snapshot.finishedJobs(),
                        snapshot.positions());
        restoredFrom(version1);

        for (int i = 0; i < 3; i++) {
            scheduler.handleSplitRequest(1, "host-b");
            scheduler.handleSplitRequest(2, "host-c");
        }
        assertThat(tasksOf(1)).hasSize(3);
        assertThat(tasksOf(2)).hasSize(3);
        control.progress.add(new DeliveryProgress("older", "c0", 0, 1, 7, 8192, true));
        control.progress.add(new DeliveryProgress("older", "c1", 0, 1, 7, 8192, true));
        turn();

        assertThat(control.states("older")).endsWith(JobState.COMPLETED);
        assertThat(control.reason("older", JobState.COMPLETED))
                .as("6 of the 8 tasks counted: no locality rather than a false one")
                .isEmpty();
    }

    /**
     * A new scheduler, restored from {@code state} through the serializer as a failover restores
     * it; returns the state it was restored from.
     */
    private GenerationState restoredFrom(GenerationState state) throws Exception {
        GenerationStateSerializer serializer = new GenerationStateSerializer();
        GenerationState restored =
                serializer.deserialize(serializer.getVersion(), serializer.serialize(state));
        context = new TestingSplitEnumeratorContext<>(3);
        scheduler.close();
        scheduler = started(restored);
        return restored;
    }

    @Test
    void aReaderGoneSilentAbortsItsJobButOneAtItsEndDoesNot() {
        submitAndStart(job("quiet"));
        clock.addAndGet(3_000);
        control.progress.add(new DeliveryProgress("quiet", "c0", 0, 1, 7, 8192, true));
        control.progress.add(new DeliveryProgress("quiet", "c1", 0, 1, 2, 3072, false));
        turn();
        clock.addAndGet(4_000);
        control.progress.add(new DeliveryProgress("quiet", "c1", 0, 1, 3, 4096, false));
        turn();
        assertThat(control.states("quiet")).containsExactly(JobState.ACCEPTED, JobState.RUNNING);
        clock.addAndGet(5_001);
        turn();
        assertThat(control.states("quiet")).endsWith(JobState.FAILED);
        assertThat(control.reason("quiet", JobState.FAILED))
                .contains("c1 reader 0 at node-1 is gone");
        assertThat(context.getSentEvents().get(0)).contains(new JobEvents.DropJob("quiet"));
        // The sink's writers hold nothing back for it any more: 8 chunks of 1 KiB per stream.
        assertThat(control.released)
                .containsExactly(
                        new DeliveryProgress("quiet", "c0", 0, 1, 7, 8192, true),
                        new DeliveryProgress("quiet", "c1", 0, 1, 7, 8192, true));
    }

    @Test
    void tasksOfALostProducerGoOutAgainFirst() {
        submitAndStart(job("j"));
        scheduler.handleSplitRequest(0, "host-a");
        ComputeTaskSplit lost = context.getSplitAssignments().get(0).getAssignedSplits().get(0);
        scheduler.addSplitsBack(List.of(new ComputeTaskSplit(lost.task(), 1)), 0);
        scheduler.handleSplitRequest(2, "host-c");
        ComputeTaskSplit again = context.getSplitAssignments().get(2).getAssignedSplits().get(0);
        assertThat(again.splitId()).isEqualTo(lost.splitId());
        assertThat(again.emittedChunks()).isEqualTo(1);
    }

    @Test
    void aCheckpointWaitsForEveryStatusPublishedBeforeIt() {
        submitAndStart(job("flushed"));
        assertThat(control.states("flushed")).containsExactly(JobState.ACCEPTED, JobState.RUNNING);
        assertThat(control.flushedStatuses).as("statuses are sent, not waited for").isZero();

        scheduler.snapshotState(1);

        assertThat(control.flushedStatuses).isEqualTo(control.published.size());
    }

    @Test
    void aRestoredSchedulerGoesOnWhereItsCheckpointWas() throws Exception {
        submitAndStart(job("long"));
        scheduler.handleSplitRequest(0, "host-a");
        scheduler.handleSplitRequest(0, "host-a");
        List<String> before = tasksOf(0);
        GenerationStateSerializer serializer = new GenerationStateSerializer();
        GenerationState state =
                serializer.deserialize(
                        serializer.getVersion(), serializer.serialize(scheduler.snapshotState(1)));
        assertThat(state.positions()).isNotEmpty();

        context = new TestingSplitEnumeratorContext<>(3);
        scheduler.close();
        scheduler = started(state);
        assertThat(control.seeked).isEqualTo(state.positions());
        for (int i = 0; i < 3; i++) {
            scheduler.handleSplitRequest(1, "host-y");
            scheduler.handleSplitRequest(2, "host-z");
        }
        assertThat(Stream.concat(tasksOf(1).stream(), tasksOf(2).stream()).toList())
                .as("the 6 tasks not handed out before the checkpoint, none twice")
                .hasSize(6)
                .doesNotHaveDuplicates()
                .doesNotContainAnyElementsOf(before);
    }

    private void progress(String job, String stream, long deliveredSeq) {
        control.progress.add(
                new DeliveryProgress(
                        job, stream, 0, 1, deliveredSeq, 1024 * (deliveredSeq + 1), false));
        turn();
    }

    private long countOf(int subtask, String prefix) {
        return tasksOf(subtask).stream().filter(task -> task.startsWith(prefix)).count();
    }

    @Test
    void aStreamWhoseProducerWindowIsFullGetsNoTaskWhileTheOtherStreamsTasksGo() {
        submitAndStart(job("w"));
        for (int i = 0; i < 6; i++) {
            scheduler.handleSplitRequest(2, "host-c");
        }
        assertThat(tasksOf(2))
                .as("two undelivered tasks of each stream, the other two requests wait")
                .containsExactlyInAnyOrder("w/c0/0", "w/c1/0", "w/c0/1", "w/c1/1");

        // c1's readers got its first two tasks (chunks 0 to 3); c0's got nothing.
        progress("w", "c1", 3);
        assertThat(tasksOf(2)).hasSize(6).endsWith("w/c1/2", "w/c1/3");
        assertThat(countOf(2, "w/c0/")).as("c0's window stays full").isEqualTo(2);
    }

    @Test
    void progressThatDeliversATaskAnswersTheWaitingRequest() {
        submitAndStart(job("p"));
        for (int i = 0; i < 5; i++) {
            scheduler.handleSplitRequest(2, "host-c");
        }
        assertThat(tasksOf(2)).hasSize(4);

        progress("p", "c0", 0);
        assertThat(tasksOf(2)).as("c0/0 ends at chunk 1: not delivered yet").hasSize(4);
        progress("p", "c0", 1);
        assertThat(tasksOf(2)).hasSize(5).endsWith("p/c0/2");
    }

    @Test
    void tasksOfALostProducerGoOutAgainDespiteAFullWindow() {
        submitAndStart(job("r"));
        for (int i = 0; i < 4; i++) {
            scheduler.handleSplitRequest(0, "host-a");
            scheduler.handleSplitRequest(1, "host-b");
        }
        assertThat(tasksOf(0)).hasSize(4);
        assertThat(tasksOf(1)).hasSize(4);
        List<ComputeTaskSplit> lost = context.getSplitAssignments().get(1).getAssignedSplits();

        scheduler.addSplitsBack(List.of(lost.get(0), lost.get(1)), 1);
        scheduler.handleSplitRequest(0, "host-a");
        scheduler.handleSplitRequest(0, "host-a");

        assertThat(tasksOf(0))
                .as("producer 0 holds two undelivered tasks of each stream already")
                .hasSize(6)
                .endsWith(lost.get(1).splitId(), lost.get(0).splitId());
    }

    @Test
    void pacedStreamsGoBeforeUnpacedOnes() {
        submitAndStart(job("greedy"));
        submitAndStart(TestJobs.paced(job("paced"), 100_000, 100_000));
        for (int i = 0; i < 5; i++) {
            scheduler.handleSplitRequest(2, "host-c");
        }
        assertThat(tasksOf(2))
                .as("the paced job's two streams fill the producer's window first")
                .extracting(task -> task.substring(0, task.indexOf('/')))
                .containsExactly("paced", "paced", "paced", "paced", "greedy");
    }

    @Test
    void theMostUrgentPacedStreamGoesFirst() {
        // c0 read at 1000 B/s, c1 at 4000: a task of 2 KiB lasts c0 2 s, c1 0.5 s.
        submitAndStart(TestJobs.paced(job("urgent"), 1000, 4000));
        for (int i = 0; i < 4; i++) {
            scheduler.handleSplitRequest(2, "host-c");
        }
        assertThat(tasksOf(2))
                .as(
                        "c0 on the tie, then c1 while its buffer lasts less, then c0 (c1's window"
                                + " full)")
                .containsExactly("urgent/c0/0", "urgent/c1/0", "urgent/c1/1", "urgent/c0/1");

        // host-b is c1's output location's host: it wins a tie there.
        submitAndStart(TestJobs.paced(job("near"), 1000, 1000));
        scheduler.handleSplitRequest(1, "host-b");
        assertThat(tasksOf(1)).containsExactly("near/c1/0");
    }

    /**
     * c0 is read at 1000 B/s, c1 at 2000 (c1's task lasts its reader 1.024 s). Producer 1, on c1's
     * host, takes c1's first task on the tie and computes it in {@code taskMillis}; asking again,
     * c0's buffer is empty and c1's lasts 1.024 s: c1 goes when that is less than one of the
     * producer's tasks longer, else the more urgent c0.
     */
    @ParameterizedTest(name = "a task of {0} ms: {1}")
    @CsvSource({"2000, c1/1", "1000, c0/0"})
    void aPacedStreamOnTheProducersHostGoesFirstWhenItLastsLessThanOneOfItsTasksLonger(
            long taskMillis, String second) {
        submitAndStart(TestJobs.paced(job("near"), 1000, 2000));
        scheduler.handleSplitRequest(1, "host-b");
        after(taskMillis);
        done(1, "near/c1/0");
        scheduler.handleSplitRequest(1, "host-b");
        assertThat(tasksOf(1)).containsExactly("near/c1/0", "near/" + second);
    }

    /** Two streams of 32 KiB in tasks of 2 KiB: 16 tasks each. */
    private static JobSpec longJob(String id, int weight) {
        return TestJobs.weighted(
                TestJobs.job(id, 2, 32 * 1024, 2 * 1024, 1024, Object.class, Map.of()), weight);
    }

    @Test
    void unpacedJobsShareTheProducersByWeight() {
        submitAndStart(longJob("heavy", 2));
        submitAndStart(longJob("light", 1));
        for (int i = 0; i < 4; i++) {
            for (int subtask = 0; subtask < 3; subtask++) {
                scheduler.handleSplitRequest(subtask, "host-" + (char) ('a' + subtask));
            }
        }
        long heavy = 0;
        long light = 0;
        for (int subtask = 0; subtask < 3; subtask++) {
            heavy += countOf(subtask, "heavy/");
            light += countOf(subtask, "light/");
        }
        assertThat(heavy).isEqualTo(8);
        assertThat(light).isEqualTo(4);
    }

    @Test
    void aJobSubmittedLaterStartsAtTheCurrentPass() {
        submitAndStart(longJob("first", 1));
        for (int subtask = 0; subtask < 3; subtask++) {
            scheduler.handleSplitRequest(subtask, "host-" + (char) ('a' + subtask));
            scheduler.handleSplitRequest(subtask, "host-" + (char) ('a' + subtask));
        }
        submitAndStart(longJob("second", 1));
        for (int subtask = 0; subtask < 3; subtask++) {
            scheduler.handleSplitRequest(subtask, "host-" + (char) ('a' + subtask));
            scheduler.handleSplitRequest(subtask, "host-" + (char) ('a' + subtask));
        }
        long second = 0;
        for (int subtask = 0; subtask < 3; subtask++) {
            second += countOf(subtask, "second/");
        }
        assertThat(second)
                .as("half the tasks after it joined, not all of them until it caught up")
                .isEqualTo(3);
    }

    /** Each task handed to {@code subtask} so far, by id, with the way its chunks go. */
    private Map<String, Transport> transportsOf(int subtask) {
        Map<String, Transport> transports = new LinkedHashMap<>();
        var assignment = context.getSplitAssignments().get(subtask);
        if (assignment != null) {
            assignment
                    .getAssignedSplits()
                    .forEach(split -> transports.put(split.splitId(), split.transport()));
        }
        return transports;
    }

    /** The scheduler again, empty, with {@code node-1} (host-b) set to {@code transport}. */
    private void restartWithOutputLocationTransport(Transport transport) throws Exception {
        restartWith(Map.of("node-1", transport), SETTINGS.speculation());
    }

    /** A new scheduler with these output location transports and speculation on or off. */
    private void restartWith(Map<String, Transport> transports, boolean speculation)
            throws Exception {
        restartWith(transports, speculation, SETTINGS.preferredLeaderInterval());
    }

    /** A new scheduler with these transports, speculation and preferred-leader interval. */
    private void restartWith(
            Map<String, Transport> transports, boolean speculation, Duration leaderInterval)
            throws Exception {
        context = new TestingSplitEnumeratorContext<>(3);
        scheduler.close();
        scheduler =
                started(
                        GenerationState.empty(),
                        new GenerationEnumerator.Settings(
                                SETTINGS.maxJobs(),
                                SETTINGS.readerTimeout(),
                                SETTINGS.pollInterval(),
                                SETTINGS.hosts(),
                                SETTINGS.tasksAheadPerStream(),
                                transports,
                                speculation,
                                leaderInterval));
    }

    private void resubscribed(String job, String stream, long deliveredSeq) {
        control.progress.add(
                new DeliveryProgress(
                        job, stream, 0, 1, deliveredSeq, 1024 * (deliveredSeq + 1), false, true));
        turn();
    }

    private void done(int subtask, String task) {
        scheduler.handleSourceEvent(
                subtask,
                JobEvents.TaskDone.complete(task.substring(0, task.indexOf('/')), task, 2 * 1024));
    }

    @Test
    void anAutoStreamGoesTheLocalWayFromAProducerOnItsHostAndThroughKafkaFromOthers() {
        submitAndStart(job("auto"));
        // host-b is node-1's host: c1's tasks first, the local way.
        scheduler.handleSplitRequest(1, "host-b");
        scheduler.handleSplitRequest(1, "host-b");
        // host-c is no stream's host.
        scheduler.handleSplitRequest(2, "host-c");
        scheduler.handleSplitRequest(2, "host-c");

        assertThat(transportsOf(1))
                .containsExactly(
                        Map.entry("auto/c1/0", Transport.LOCAL),
                        Map.entry("auto/c1/1", Transport.LOCAL));
        assertThat(transportsOf(2)).hasSize(2).containsValues(Transport.KAFKA, Transport.KAFKA);
        assertThat(transportsOf(2).keySet()).anyMatch(task -> task.startsWith("auto/c0/"));
    }

    @Test
    void aKafkaJobOrOutputLocationStaysKafkaAlsoOnTheOutputLocationsHost() throws Exception {
        submitAndStart(TestJobs.transported(job("replayable"), Transport.KAFKA));
        scheduler.handleSplitRequest(1, "host-b");
        assertThat(transportsOf(1)).containsExactly(Map.entry("replayable/c1/0", Transport.KAFKA));

        restartWithOutputLocationTransport(Transport.KAFKA);
        // The job says local, node-1 says kafka: kafka wins; c0's output location says nothing.
        submitAndStart(TestJobs.transported(job("mixed"), Transport.LOCAL));
        scheduler.handleSplitRequest(1, "host-b");
        scheduler.handleSplitRequest(1, "host-b");
        assertThat(transportsOf(1))
                .containsExactly(
                        Map.entry("mixed/c1/0", Transport.KAFKA),
                        Map.entry("mixed/c1/1", Transport.KAFKA));
    }

    @Test
    void aLocalStreamWaitsForAProducerOnItsHost() {
        submitAndStart(TestJobs.transported(job("near"), Transport.LOCAL));
        // No producer is on node-0, c0's host; host-b is c1's.
        scheduler.handleSplitRequest(2, "host-c");
        scheduler.handleSplitRequest(0, "host-a");
        assertThat(tasksOf(2)).as("a far producer gets none of the job's tasks").isEmpty();
        assertThat(tasksOf(0)).isEmpty();

        scheduler.handleSplitRequest(1, "host-b");
        scheduler.handleSplitRequest(1, "host-b");
        scheduler.handleSplitRequest(1, "host-b");
        assertThat(transportsOf(1))
                .as("two of c1's tasks, its window then full; never c0's")
                .containsExactly(
                        Map.entry("near/c1/0", Transport.LOCAL),
                        Map.entry("near/c1/1", Transport.LOCAL));
    }

    @Test
    void aLocalOutputLocationKeepsItsStreamsTasksForItsHostAndItsTasksGivenBackToo()
            throws Exception {
        restartWithOutputLocationTransport(Transport.LOCAL);
        submitAndStart(job("kept"));
        scheduler.handleSplitRequest(1, "host-b");
        ComputeTaskSplit lost = context.getSplitAssignments().get(1).getAssignedSplits().get(0);
        assertThat(lost.splitId()).isEqualTo("kept/c1/0");
        scheduler.addSplitsBack(List.of(lost), 1);

        // c0's output location says nothing: auto, through Kafka from host-c.
        scheduler.handleSplitRequest(2, "host-c");
        scheduler.handleSplitRequest(2, "host-c");
        scheduler.handleSplitRequest(2, "host-c");
        assertThat(transportsOf(2))
                .as("c1's task given back waits for a producer on host-b")
                .containsOnlyKeys("kept/c0/0", "kept/c0/1")
                .containsValues(Transport.KAFKA);

        // The producer on host-b, back after its failure, asks again.
        scheduler.handleSplitRequest(1, "host-b");
        assertThat(transportsOf(1)).containsEntry("kept/c1/0", Transport.LOCAL);
    }

    @Test
    void aResubscribedReaderPutsBackExactlyItsStreamsUndeliveredTasksToGoOutFirst() {
        submitAndStart(job("lost"));
        for (int i = 0; i < 3; i++) {
            scheduler.handleSplitRequest(1, "host-b");
        }
        assertThat(tasksOf(1)).containsExactly("lost/c1/0", "lost/c1/1", "lost/c0/0");
        tasksOf(1).forEach(task -> done(1, task));
        progress("lost", "c1", 1);
        scheduler.handleSplitRequest(1, "host-b");
        assertThat(tasksOf(1)).endsWith("lost/c1/2");
        done(1, "lost/c1/2");

        // c1's chunks 0 and 1 (task 0) were delivered; tasks 1 and 2 were not and are lost.
        resubscribed("lost", "c1", 1);
        scheduler.handleSplitRequest(2, "host-c");
        scheduler.handleSplitRequest(2, "host-c");
        scheduler.handleSplitRequest(2, "host-c");

        assertThat(tasksOf(2))
                .as("the undelivered tasks first, in task order, then new work")
                .hasSize(3)
                .startsWith("lost/c1/1", "lost/c1/2")
                .doesNotContain("lost/c1/0", "lost/c0/0");
        assertThat(transportsOf(2))
                .as("decided again for the producer they go to now")
                .containsEntry("lost/c1/1", Transport.KAFKA);
    }

    @Test
    void aTaskPutBackThatIsDeliveredBeforeItGoesOutAgainIsDone() {
        submitAndStart(job("late"));
        scheduler.handleSplitRequest(1, "host-b");
        scheduler.handleSplitRequest(1, "host-b");
        tasksOf(1).forEach(task -> done(1, task));
        resubscribed("late", "c1", -1);

        // c1/0's chunks (0 and 1) reach the reader after all, fetched again from Kafka.
        progress("late", "c1", 1);
        scheduler.handleSplitRequest(2, "host-c");

        assertThat(tasksOf(2)).containsExactly("late/c1/1");
    }

    @Test
    void aResubscribedKafkaStreamPutsNothingBack() {
        submitAndStart(TestJobs.transported(job("logged"), Transport.KAFKA));
        scheduler.handleSplitRequest(1, "host-b");
        scheduler.handleSplitRequest(1, "host-b");
        tasksOf(1).forEach(task -> done(1, task));

        resubscribed("logged", "c1", -1);
        scheduler.handleSplitRequest(2, "host-c");

        assertThat(tasksOf(2))
                .as("a new task: the daemon fetches c1's chunks again from Kafka")
                .singleElement()
                .isIn("logged/c0/0", "logged/c1/2");
    }

    @Test
    void aTaskPutBackIsNotGivenToTheProducerStillComputingItNorPutBackTwice() {
        submitAndStart(job("busy"));
        scheduler.handleSplitRequest(1, "host-b");
        assertThat(tasksOf(1)).containsExactly("busy/c1/0");

        resubscribed("busy", "c1", -1);
        resubscribed("busy", "c1", -1);
        scheduler.handleSplitRequest(1, "host-b");
        assertThat(tasksOf(1))
                .as("producer 1 still holds c1/0: a new task for it")
                .containsExactly("busy/c1/0", "busy/c1/1");
        scheduler.handleSplitRequest(2, "host-c");
        scheduler.handleSplitRequest(2, "host-c");
        assertThat(tasksOf(2)).startsWith("busy/c1/0").doesNotHaveDuplicates();
    }

    @Test
    void aRestoredSchedulerPutsBackTasksHandedOutBeforeItsCheckpoint() throws Exception {
        submitAndStart(job("before"));
        scheduler.handleSplitRequest(1, "host-b");
        scheduler.handleSplitRequest(1, "host-b");
        restoredFrom(scheduler.snapshotState(1));

        resubscribed("before", "c1", 1);
        scheduler.handleSplitRequest(2, "host-c");

        assertThat(tasksOf(2)).containsExactly("before/c1/1");
    }

    /** A job of one stream, c0 to node-0, of 8 tasks of two 1 KiB chunks, read at {@code rate}. */
    private static JobSpec pacedJob(String id, long rate) {
        return TestJobs.paced(
                TestJobs.job(id, 1, 16 * 1024, 2 * 1024, 1024, Object.class, Map.of()), rate);
    }

    /** c0's reader of {@code job} was delivered up to {@code seq}, at the clock's time. */
    private void delivered(String job, long seq, boolean ended) {
        control.progress.add(new DeliveryProgress(job, "c0", 0, 1, seq, 1024 * (seq + 1), ended));
        turn();
    }

    private void after(long millis) {
        clock.addAndGet(millis);
        turn();
    }

    private String completion(String job) {
        return control.reason(job, JobState.COMPLETED);
    }

    /**
     * A paced job whose reader reads a task a second: producer 0 computed task 0 in 100 ms, it was
     * delivered, and the producer holds task 1.
     */
    private void onTask1AfterATaskOf100Millis(String job) {
        submitAndStart(pacedJob(job, 2048));
        scheduler.handleSplitRequest(0, "host-a");
        after(100);
        done(0, job + "/c0/0");
        scheduler.handleSplitRequest(0, "host-a");
        delivered(job, 1, false);
    }

    @Test
    void aStalledProducersPacedTaskGetsADuplicateAndTheFirstCopyDoneWins() {
        onTask1AfterATaskOf100Millis("stall");
        assertThat(tasksOf(0)).containsExactly("stall/c0/0", "stall/c0/1");

        // Producer 0 computed a task in 100 ms; 250 ms into task 1 it is late, not yet slow.
        after(250);
        scheduler.handleSplitRequest(1, "host-b");
        assertThat(tasksOf(1)).containsExactly("stall/c0/2");
        // Past three times its expected time it is slow: task 1 goes out again, first.
        after(100);
        scheduler.handleSplitRequest(2, "host-c");
        assertThat(tasksOf(2)).containsExactly("stall/c0/1");

        after(100);
        done(2, "stall/c0/1");
        delivered("stall", 3, false);
        assertThat(context.getSentEvents().getOrDefault(0, List.of()))
                .as("no event to a producer that does not answer")
                .isEmpty();
        // Producer 0 comes back and finishes its copy: wasted.
        done(0, "stall/c0/1");
        delivered("stall", 15, true);
        assertThat(completion("stall")).endsWith("1 duplicates issued, 1 won, 2048 bytes wasted");
    }

    @Test
    void aProducerPreloadingANewJobIsNotFoundSlowForIt() {
        onTask1AfterATaskOf100Millis("first");
        after(100);
        done(0, "first/c0/1");
        control.commands.add(new JobCommand.Cancel("first"));
        // Producer 0 computes a task in 100 ms; its first task of the next job waits 300 ms for
        // the job's generator to be made and preloaded: no duplicate while nobody knows how long
        // that takes.
        submitAndStart(pacedJob("next", 2048));
        scheduler.handleSplitRequest(0, "host-a");
        assertThat(tasksOf(0)).contains("next/c0/0");
        after(400);
        scheduler.handleSplitRequest(1, "host-b");
        assertThat(tasksOf(1)).containsExactly("next/c0/1");
        scheduler.handleSourceEvent(
                0, new JobEvents.TaskDone("next", "next/c0/0", "", 2048, false, 300));

        // Producer 1's first task of the job is expected in the same 400 ms, and found slow at
        // three times that (its reader has not started: no task is late for it).
        after(1200);
        scheduler.handleSplitRequest(2, "host-c");
        assertThat(tasksOf(2)).doesNotContain("next/c0/1");
        after(1);
        scheduler.handleSplitRequest(2, "host-c");
        assertThat(tasksOf(2)).contains("next/c0/1");
    }

    @Test
    void aJobIsIssuedAtMostTwoDuplicatesAndATenthOfItsOtherTasks() {
        onTask1AfterATaskOf100Millis("cap");
        scheduler.handleSplitRequest(1, "host-b");
        assertThat(tasksOf(1)).containsExactly("cap/c0/2");
        // Producers 0 and 1 both stall: both of their tasks get a duplicate, on producer 2.
        after(350);
        scheduler.handleSplitRequest(2, "host-c");
        scheduler.handleSplitRequest(2, "host-c");
        assertThat(tasksOf(2)).containsExactlyInAnyOrder("cap/c0/1", "cap/c0/2");
        after(100);
        done(2, "cap/c0/1");
        done(0, "cap/c0/1");
        done(1, "cap/c0/2");
        after(100);
        done(2, "cap/c0/2");
        delivered("cap", 5, false);
        scheduler.handleSplitRequest(2, "host-c");
        assertThat(tasksOf(2)).containsExactlyInAnyOrder("cap/c0/1", "cap/c0/2", "cap/c0/3");

        // Producer 2 stalls in turn, and producer 0 could take a duplicate; but 4 tasks were
        // handed out, a tenth of which is no whole duplicate more than the 2 issued.
        after(1000);
        scheduler.handleSplitRequest(0, "host-a");
        assertThat(tasksOf(0)).doesNotContain("cap/c0/3");
        assertThat(tasksOf(0)).contains("cap/c0/4");
        done(2, "cap/c0/3");
        done(0, "cap/c0/4");
        delivered("cap", 15, true);
        assertThat(completion("cap")).contains("2 duplicates issued");
    }

    @Test
    void aSlowProducerTakesAPacedTaskOnlyWhenTheBufferOutlastsItAndLosesItWhenTheBufferRunsLow() {
        // A task lasts the reader 2 s; producer 1 computes one in 1 s, producer 0 is announced
        // four times slower: 4 s a task.
        submitAndStart(pacedJob("slow", 1024));
        scheduler.handleSourceEvent(0, new JobEvents.ProducerReady(2, 0.25));
        scheduler.handleSplitRequest(1, "host-b");
        after(1000);
        done(1, "slow/c0/0");
        scheduler.handleSplitRequest(0, "host-a");
        assertThat(tasksOf(0)).as("2 s of buffer, 4 s to compute").isEmpty();
        scheduler.handleSplitRequest(1, "host-b");
        assertThat(tasksOf(0)).as("4 s of buffer").containsExactly("slow/c0/2");
        scheduler.handleSplitRequest(2, "host-c");
        assertThat(tasksOf(2))
                .as("no duplicate before the reader started")
                .containsExactly("slow/c0/3");

        // Task 0 delivered: the reader needs task 2 in 2 s, producer 0 is done with it in 4.
        after(100);
        delivered("slow", 1, false);
        scheduler.handleSplitRequest(2, "host-c");
        assertThat(tasksOf(2)).containsExactly("slow/c0/3", "slow/c0/2");
        after(900);
        done(1, "slow/c0/1");
        done(2, "slow/c0/3");
        delivered("slow", 3, false);
        after(1000);
        done(2, "slow/c0/2");
        assertThat(context.getSentEvents().get(0))
                .as("the losing copy is dropped")
                .containsExactly(new JobEvents.DropTask("slow/c0/2"));
        scheduler.handleSourceEvent(
                0, new JobEvents.TaskDone("slow", "slow/c0/2", "", 512, true, 0));
        delivered("slow", 15, true);
        assertThat(completion("slow")).endsWith("1 duplicates issued, 1 won, 512 bytes wasted");
    }

    @Test
    void aProducerRestoredFromItsCheckpointDropsTheTasksDuplicatedMeanwhile() {
        onTask1AfterATaskOf100Millis("restore");
        after(350);
        scheduler.handleSplitRequest(2, "host-c");
        assertThat(tasksOf(2)).containsExactly("restore/c0/1");

        // Flink restores producer 0: task 1 was in its checkpoint, so nothing comes back.
        scheduler.addSplitsBack(List.of(), 0);
        scheduler.handleSourceEvent(0, new JobEvents.ProducerReady(2, 1.0));
        assertThat(context.getSentEvents().get(0))
                .containsExactly(new JobEvents.DropTask("restore/c0/1"));
    }

    @Test
    void aJobWhoseChunkTopicIsMissingIsRefusedNamingIt() throws Exception {
        control.missing.add("sluice.chunks.node-1");
        control.commands.add(new JobCommand.Submit(job("topicless")));
        turn();
        assertThat(control.states("topicless")).containsExactly(JobState.REFUSED);
        assertThat(control.reason("topicless", JobState.REFUSED))
                .startsWith("no chunk topic sluice.chunks.node-1 on the cluster: create it");

        // A stream that goes the local way only needs none.
        restartWithOutputLocationTransport(Transport.LOCAL);
        control.commands.add(new JobCommand.Submit(job("local")));
        turn();
        assertThat(control.states("local")).containsExactly(JobState.ACCEPTED);
    }

    @Test
    void aJobWhoseChunksAreLargerThanTheirTopicTakesIsRefusedNamingTheLimit() throws Exception {
        control.maxMessageBytes.put("sluice.chunks.node-0", 1_048_588);
        control.maxMessageBytes.put("sluice.chunks.node-1", 2_000);
        control.commands.add(
                new JobCommand.Submit(
                        TestJobs.job(
                                "large", 2, 8 * 1024, 4 * 1024, 2048, Object.class, Map.of())));
        control.commands.add(new JobCommand.Submit(job("fitting")));
        turn();

        assertThat(control.states("large")).containsExactly(JobState.REFUSED);
        String reason = control.reason("large", JobState.REFUSED);
        Matcher named =
                Pattern.compile(
                                "stream c1: its chunks of 2048 B are up to (\\d+) bytes as Kafka"
                                        + " records, more than its chunk topic sluice.chunks.node-1"
                                        + " takes \\(max.message.bytes = 2000\\): lower its"
                                        + " chunkSizeBytes to (\\d+) or less, or raise the"
                                        + " topic's max.message.bytes .*")
                        .matcher(reason);
        assertThat(named.matches()).as(reason).isTrue();
        assertThat(Integer.parseInt(named.group(1)))
                .isEqualTo(ChunkRecords.largestRecordBytes("large", "c1", 2048));
        int fitting = Integer.parseInt(named.group(2));
        assertThat(ChunkRecords.largestRecordBytes("large", "c1", fitting))
                .isLessThanOrEqualTo(2000);
        assertThat(ChunkRecords.largestRecordBytes("large", "c1", fitting + 1)).isGreaterThan(2000);
        // Chunks of 1 KiB fit: the job is run.
        assertThat(control.states("fitting")).containsExactly(JobState.ACCEPTED);

        // A stream that goes the local way is not sent through its topic.
        restartWithOutputLocationTransport(Transport.LOCAL);
        control.commands.add(
                new JobCommand.Submit(
                        TestJobs.job(
                                "local", 2, 8 * 1024, 4 * 1024, 2048, Object.class, Map.of())));
        turn();
        assertThat(control.states("local")).containsExactly(JobState.ACCEPTED);
    }

    @Test
    void aJobWhoseChunksCannotBeWrittenFailsAloneAndLeavesTheCheckpoint() {
        submitAndStart(job("poisoned"));
        submitAndStart(job("valid"));
        scheduler.handleSplitRequest(0, "host-a");
        scheduler.handleSplitRequest(0, "host-a");

        control.commands.add(new JobCommand.Fail("poisoned", "chunk too large"));
        turn();
        assertThat(control.states("poisoned")).endsWith(JobState.FAILED);
        assertThat(control.reason("poisoned", JobState.FAILED)).isEqualTo("chunk too large");
        assertThat(control.states("valid")).containsExactly(JobState.ACCEPTED, JobState.RUNNING);
        assertThat(context.getSentEvents().get(0)).contains(new JobEvents.DropJob("poisoned"));
        assertThat(scheduler.snapshotState(1).jobs())
                .extracting(j -> j.spec().id())
                .containsExactly("valid");

        // A producer restored from before the failure reports one of its tasks: it is told again
        // to drop the rest.
        scheduler.handleSourceEvent(
                1, JobEvents.TaskDone.complete("poisoned", "poisoned/c0/5", 2048));
        assertThat(context.getSentEvents().get(1))
                .containsExactly(
                        new JobEvents.DropJob("poisoned"), new JobEvents.DropJob("poisoned"));
        scheduler.handleSplitRequest(1, "host-b");
        assertThat(tasksOf(1)).allMatch(task -> task.startsWith("valid/"));
    }

    @Test
    void withoutSpeculationAStalledProducerKeepsItsTask() throws Exception {
        restartWith(SETTINGS.transports(), false);
        onTask1AfterATaskOf100Millis("off");
        after(1000);
        scheduler.handleSplitRequest(2, "host-c");
        assertThat(tasksOf(2)).containsExactly("off/c0/2");
    }

    @Test
    void thePreferredLeaderElectionsGetTheChunkTopicsOfTheLiveJobsOnly() throws Exception {
        // node-1 is reached the local way only: its chunk topic carries nothing of these jobs.
        restartWithOutputLocationTransport(Transport.LOCAL);
        control.commands.add(
                new JobCommand.Submit(
                        TestJobs.job("wide", 3, 8 * 1024, 2 * 1024, 1024, Object.class, Map.of())));
        control.commands.add(
                new JobCommand.Submit(
                        TestJobs.job(
                                "narrow", 1, 8 * 1024, 2 * 1024, 1024, Object.class, Map.of())));
        turn();
        turn();
        assertThat(control.states("wide")).containsExactly(JobState.ACCEPTED);
        assertThat(control.leaderInterval).isEqualTo(SETTINGS.preferredLeaderInterval());
        assertThat(control.leaderTopics.get())
                .isEqualTo(Set.of("sluice.chunks.node-0", "sluice.chunks.node-2"));

        control.commands.add(new JobCommand.Cancel("wide"));
        turn();
        turn();
        assertThat(control.leaderTopics.get()).isEqualTo(Set.of("sluice.chunks.node-0"));

        control.commands.add(new JobCommand.Cancel("narrow"));
        turn();
        turn();
        assertThat(control.leaderTopics.get()).isEmpty();
    }

    @Test
    void aPreferredLeaderIntervalOfZeroElectsNothing() throws Exception {
        restartWith(SETTINGS.transports(), SETTINGS.speculation(), Duration.ZERO);
        submitAndStart(job("quiet"));
        turn();
        assertThat(control.states("quiet")).containsExactly(JobState.ACCEPTED, JobState.RUNNING);
        assertThat(control.leaderTopics).isNull();
    }
}
