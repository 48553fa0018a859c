package dev.sluice.examples.source;

import dev.sluice.flink.source.ReadMode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * Runs one job of this package end to end with one command ({@code ./sluice example NAME}, see
 * examples/README.md): starts a Kafka broker and {@code sluice-brokerd}, writes the sample text to
 * a topic, runs the job on a Flink MiniCluster through SluiceSource in the mode asked for, prints
 * what it found, and stops everything.
 *
 * <pre>
 * SourceExample count|filter|wordcount|windowed-wordcount [--mode PUSH|PULL|AUTO]
 *               [--word WORD] --brokerd PATH
 * </pre>
 */
public final class SourceExample {
    static final List<String> JOBS = List.of("count", "filter", "wordcount", "windowed-wordcount");
    static final String USAGE =
            "usage: SourceExample "
                    + String.join("|", JOBS)
                    + " [--mode PUSH|PULL|AUTO] [--word WORD] --brokerd PATH";

    private SourceExample() {}

    /** The command line, checked. */
    record Args(String job, ReadMode mode, String word, Path brokerd) {
        static Args parse(String[] args) {
            if (args.length == 0 || !JOBS.contains(args[0])) {
                throw new IllegalArgumentException(
                        (args.length == 0 ? "no job" : "unknown job " + args[0])
                                + ": name one of "
                                + String.join(", ", JOBS));
            }
            String mode = "PUSH";
            String word = "sluice";
            Path brokerd = null;
            for (int i = 1; i < args.length; i += 2) {
                if (i + 1 == args.length) {
                    throw new IllegalArgumentException(args[i] + " needs a value");
                }
                String value = args[i + 1];
                switch (args[i]) {
                    case "--mode" -> mode = value;
                    case "--word" -> word = value;
                    case "--brokerd" -> brokerd = Path.of(value);
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (!mode.matches("PUSH|PULL|AUTO")) {
                throw new IllegalArgumentException("--mode " + mode + ": set PUSH, PULL or AUTO");
            }
            if (brokerd == null) {
                throw new IllegalArgumentException("--brokerd: set the sluice-brokerd executable");
            }
            return new Args(args[0], ReadMode.valueOf(mode), word, brokerd);
        }
    }

    public static void main(String[] arguments) throws Exception {
        Args args;
        try {
            args = Args.parse(arguments);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage() + "\n" + USAGE);
            System.exit(2);
            return;
        }
        List<String> lines = EmbeddedTextTopic.sampleText();
        System.out.printf(
                "%s over %d lines of text in %d partitions, SluiceSource %s%n",
                args.job(), lines.size(), EmbeddedTextTopic.PARTITIONS, args.mode());
        try (EmbeddedTextTopic topic = EmbeddedTextTopic.start(args.brokerd(), lines)) {
            StreamExecutionEnvironment env = EmbeddedTextTopic.miniCluster();
            run(args, env, topic).forEach(System.out::println);
        }
    }

    /** Runs the job and returns what it prints. */
    static List<String> run(Args args, StreamExecutionEnvironment env, EmbeddedTextTopic topic)
            throws Exception {
        return switch (args.job()) {
            case "count" -> List.of(CountJob.run(env, topic.values(env, args.mode())) + " records");
            case "filter" -> {
                List<String> kept =
                        new ArrayList<>(
                                FilterJob.run(env, topic.values(env, args.mode()), args.word()));
                // The subtasks' output interleaves; sorted, it reads the same on every run.
                kept.sort(null);
                kept.add(0, kept.size() + " lines hold \"" + args.word() + "\":");
                yield kept;
            }
            case "wordcount" ->
                    mostFrequent(WordCountJob.run(env, topic.values(env, args.mode())), 10);
            case "windowed-wordcount" -> {
                Map<String, List<Integer>> windows =
                        WindowedWordCountJob.run(
                                env,
                                topic.values(env, args.mode()),
                                WindowedWordCountJob.SIZE,
                                WindowedWordCountJob.SLIDE);
                List<String> out = new ArrayList<>();
                out.add(
                        String.format(
                                "windows of %d occurrences sliding by %d, for the words read"
                                        + " more than %d times:",
                                WindowedWordCountJob.SIZE,
                                WindowedWordCountJob.SLIDE,
                                WindowedWordCountJob.SIZE));
                windows.forEach(
                        (word, sums) -> {
                            if (sums.size() > WindowedWordCountJob.SIZE) {
                                out.add(
                                        word
                                                + ": "
                                                + sums.stream()
                                                        .map(String::valueOf)
                                                        .collect(Collectors.joining(" ")));
                            }
                        });
                yield out;
            }
            default -> throw new IllegalStateException("job " + args.job());
        };
    }

    /** The {@code n} most frequent words with their counts, the most frequent first. */
    private static List<String> mostFrequent(Map<String, Integer> counts, int n) {
        List<String> out = new ArrayList<>();
        out.add(counts.size() + " distinct words; the " + n + " most frequent:");
        counts.entrySet().stream()
                .sorted(
                        Map.Entry.<String, Integer>comparingByValue()
                                .reversed()
                                .thenComparing(Map.Entry.comparingByKey()))
                .limit(n)
                .forEach(count -> out.add(count.getKey() + " " + count.getValue()));
        return out;
    }
}
