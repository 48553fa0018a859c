package dev.sluice.examples.source;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.BrokerdProcess;
import dev.sluice.flink.source.ReadMode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Each job of this package on the real parts: the sample text in a 4-partition topic of a Kafka
 * broker, read through {@code sluice-brokerd} by SluiceSource in PUSH and PULL mode, on a Flink
 * MiniCluster; every job's output checked word for word against the text.
 */
class SourceJobsIT {
    private static List<String> lines;
    private static EmbeddedTextTopic topic;

    @BeforeAll
    static void start() throws Exception {
        lines = EmbeddedTextTopic.sampleText();
        topic = EmbeddedTextTopic.start(BrokerdProcess.defaultBinary(), lines);
    }

    @AfterAll
    static void stop() throws Exception {
        topic.close();
    }

    private static List<String> words() {
        return lines.stream().flatMap(line -> Arrays.stream(line.split(" "))).toList();
    }

    @ParameterizedTest
    @EnumSource(names = {"PUSH", "PULL"})
    void countReadsEveryLineOnce(ReadMode mode) throws Exception {
        StreamExecutionEnvironment env = EmbeddedTextTopic.miniCluster();
        assertThat(CountJob.run(env, topic.values(env, mode)))
                .isEqualTo(12)
                .isEqualTo(lines.size());
    }

    @ParameterizedTest
    @EnumSource(names = {"PUSH", "PULL"})
    void filterKeepsTheLinesThatHoldTheWord(ReadMode mode) throws Exception {
        StreamExecutionEnvironment env = EmbeddedTextTopic.miniCluster();
        List<String> kept = FilterJob.run(env, topic.values(env, mode), "sluice");
        assertThat(kept)
                .hasSize(4)
                .containsExactlyInAnyOrderElementsOf(
                        lines.stream().filter(line -> line.contains("sluice")).toList());
    }

    @ParameterizedTest
    @EnumSource(names = {"PUSH", "PULL"})
    void wordCountEndsWithEachWordsOccurrences(ReadMode mode) throws Exception {
        StreamExecutionEnvironment env = EmbeddedTextTopic.miniCluster();
        Map<String, Integer> counts = WordCountJob.run(env, topic.values(env, mode));
        Map<String, Integer> expected =
                words().stream()
                        .collect(
                                Collectors.toMap(
                                        Function.identity(), w -> 1, Integer::sum, TreeMap::new));
        assertThat(counts).isEqualTo(expected).containsEntry("the", 30).containsEntry("sluice", 4);
    }

    @ParameterizedTest
    @EnumSource(names = {"PUSH", "PULL"})
    void windowedWordCountFiresEverySlideWithTheWindowsSum(ReadMode mode) throws Exception {
        StreamExecutionEnvironment env = EmbeddedTextTopic.miniCluster();
        Map<String, List<Integer>> windows =
                WindowedWordCountJob.run(env, topic.values(env, mode), 4, 2);
        // A word read n times fires at its 2nd, 4th, ... occurrence, with the last 4 of them.
        Map<String, List<Integer>> expected = new TreeMap<>();
        words().stream()
                .collect(Collectors.groupingBy(Function.identity(), Collectors.counting()))
                .forEach(
                        (word, n) -> {
                            List<Integer> sums = new ArrayList<>();
                            for (long fired = 2; fired <= n; fired += 2) {
                                sums.add((int) Math.min(fired, 4));
                            }
                            if (!sums.isEmpty()) {
                                expected.put(word, sums);
                            }
                        });
        assertThat(windows).isEqualTo(expected).containsEntry("and", List.of(2, 4, 4, 4, 4));
    }

    @Test
    void theRunnerPrintsTheWindowsOfTheWordsReadMoreThanAWindow() throws Exception {
        StreamExecutionEnvironment env = EmbeddedTextTopic.miniCluster();
        List<String> printed =
                SourceExample.run(
                        SourceExample.Args.parse(
                                new String[] {"windowed-wordcount", "--brokerd", "unused-here"}),
                        env,
                        topic);
        assertThat(printed)
                .containsExactly(
                        "windows of 5 occurrences sliding by 1, for the words read more than 5"
                                + " times:",
                        "and: 1 2 3 4 5 5 5 5 5 5",
                        "the: 1 2 3 4 5" + " 5".repeat(25));
    }
}
