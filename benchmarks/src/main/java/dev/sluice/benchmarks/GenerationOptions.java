package dev.sluice.benchmarks;

import dev.sluice.printing.PrintJob;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The generation benchmark's command line (benchmarks/README.md, Generation): {@code --name value}
 * pairs, each checked, so that a typo fails at once rather than after minutes of other figures.
 *
 * @param brokerd the {@code sluice-brokerd} binary
 * @param results where the CSV, the tables and the plot go
 * @param reps repetitions of Figs. 4 and 5 and of the ceilings
 * @param pacedReps repetitions of Fig. 6, of the printer room and of the faults
 * @param jobs the print jobs of Figs. 4 and 5; Fig. 6 and the printer room pace the last
 * @param topologies the topologies of Figs. 4 to 6
 * @param figures which of {@code 4}, {@code 5}, {@code 6}, {@code room}, {@code transport} and
 *     {@code faults} to run
 * @param roomLoad the share of the many-to-many Fig. 5 median the room's paced jobs request
 *     together
 * @param roomGreedy the printer room's unpaced job
 */
record GenerationOptions(
        Path brokerd,
        Path results,
        int reps,
        int pacedReps,
        List<PrintJob> jobs,
        List<String> topologies,
        List<String> figures,
        double roomLoad,
        PrintJob roomGreedy) {

    static final String ROOM = "room";
    static final String TRANSPORT = "transport";
    static final String FAULTS = "faults";
    private static final Set<String> FIGURES = Set.of("4", "5", "6", ROOM, TRANSPORT, FAULTS);
    private static final Set<String> NAMES =
            Set.of(
                    "--brokerd",
                    "--results",
                    "--reps",
                    "--fig6-reps",
                    "--jobs",
                    "--topologies",
                    "--figures",
                    "--room-load",
                    "--room-greedy");

    static GenerationOptions parse(String... args) {
        if (args.length % 2 != 0) {
            throw new IllegalArgumentException(
                    "options come as --name value pairs; '" + args[args.length - 1] + "' has none");
        }
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i < args.length; i += 2) {
            if (!NAMES.contains(args[i])) {
                throw new IllegalArgumentException(
                        "unknown option "
                                + args[i]
                                + "; the options are "
                                + String.join(", ", NAMES));
            }
            options.put(args[i], args[i + 1]);
        }
        if (!options.containsKey("--brokerd")) {
            throw new IllegalArgumentException(
                    "--brokerd PATH: the sluice-brokerd binary is required");
        }
        List<String> topologies =
                List.of(
                        options.getOrDefault(
                                        "--topologies",
                                        String.join(",", GenerationBenchmark.TOPOLOGIES))
                                .split(","));
        for (String topology : topologies) {
            if (!Arrays.asList(GenerationBenchmark.TOPOLOGIES).contains(topology)) {
                throw new IllegalArgumentException(
                        "--topologies: unknown topology '"
                                + topology
                                + "'; expected some of "
                                + String.join(",", GenerationBenchmark.TOPOLOGIES));
            }
        }
        List<String> figures = List.of(options.getOrDefault("--figures", "4,5,6,room").split(","));
        for (String figure : figures) {
            if (!FIGURES.contains(figure)) {
                throw new IllegalArgumentException(
                        "--figures: unknown figure '"
                                + figure
                                + "'; expected some of 4,5,6,room,transport,faults");
            }
        }
        if (figures.contains(FAULTS)
                && topologies.stream().noneMatch(t -> GenerationBenchmark.producers(t) == 2)) {
            throw new IllegalArgumentException(
                    "--figures faults strikes one of two producers: add many-to-one or"
                            + " many-to-many to --topologies");
        }
        if (figures.contains(ROOM) && !topologies.contains("many-to-many")) {
            throw new IllegalArgumentException(
                    "--figures room paces its jobs at a share of the many-to-many Fig. 5 median:"
                            + " add many-to-many to --topologies");
        }
        String load = options.getOrDefault("--room-load", "0.5");
        double roomLoad;
        try {
            roomLoad = Double.parseDouble(load);
        } catch (NumberFormatException e) {
            roomLoad = Double.NaN;
        }
        if (!(roomLoad > 0 && roomLoad <= 1)) {
            throw new IllegalArgumentException(
                    "--room-load: the paced jobs' share of the many-to-many Fig. 5 median, above 0"
                            + " and at most 1, got '"
                            + load
                            + "'");
        }
        return new GenerationOptions(
                Path.of(options.get("--brokerd")),
                Path.of(options.getOrDefault("--results", "benchmarks/results")),
                positive(options, "--reps", "3"),
                positive(options, "--fig6-reps", "5"),
                Arrays.stream(options.getOrDefault("--jobs", "A,B/6").split(","))
                        .map(PrintJob::preset)
                        .toList(),
                topologies,
                figures,
                roomLoad,
                PrintJob.preset(options.getOrDefault("--room-greedy", "B/3")));
    }

    private static int positive(Map<String, String> options, String name, String otherwise) {
        String value = options.getOrDefault(name, otherwise);
        int count;
        try {
            count = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            count = 0;
        }
        if (count < 1) {
            throw new IllegalArgumentException(
                    name + ": a number of repetitions of at least 1, got '" + value + "'");
        }
        return count;
    }

    /** The job Fig. 6 and the printer room pace: the last of {@code --jobs}. */
    PrintJob pacedJob() {
        return jobs.get(jobs.size() - 1);
    }

    /**
     * Whether the runs of Fig. 5 are needed: for themselves, or as the pace of Fig. 6, the room or
     * the faults.
     */
    boolean runsComputeOn() {
        return figures.contains("5")
                || figures.contains("6")
                || figures.contains(ROOM)
                || figures.contains(FAULTS);
    }

    /** Whether Kafka's anchors are needed: the ceiling and Kafka in and out of Figs. 4 and 5. */
    boolean runsCeilings() {
        return figures.contains("4") || runsComputeOn();
    }
}
