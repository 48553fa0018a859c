package dev.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class GenerationOptionsTest {

    @Test
    void theConstantSpeedRunsAndTheRoomRunFiveRepetitionsWhateverTheOtherFiguresRun() {
        GenerationOptions options =
                GenerationOptions.parse("--brokerd", "/bin/brokerd", "--reps", "2");

        assertThat(options.brokerd()).isEqualTo(Path.of("/bin/brokerd"));
        assertThat(options.reps()).isEqualTo(2);
        assertThat(options.pacedReps()).isEqualTo(5);
        assertThat(options.figures()).containsExactly("4", "5", "6", "room");
        assertThat(options.roomLoad()).isEqualTo(0.5);
        assertThat(options.roomGreedy().name()).isEqualTo("B/3");
        assertThat(options.pacedJob().name()).isEqualTo("B/6");
    }

    @Test
    void theRoomAloneStillRunsComputeOnForItsPace() {
        GenerationOptions options =
                GenerationOptions.parse(
                        "--brokerd",
                        "b",
                        "--figures",
                        "room",
                        "--fig6-reps",
                        "1",
                        "--jobs",
                        "B/12");

        assertThat(options.runsComputeOn()).isTrue();
        assertThat(options.pacedReps()).isEqualTo(1);
        assertThat(options.pacedJob().name()).isEqualTo("B/12");
        assertThat(GenerationOptions.parse("--brokerd", "b", "--figures", "4").runsComputeOn())
                .isFalse();
    }

    @Test
    void theTransportFigureAloneRunsNeitherKafkasAnchorsNorComputeOn() {
        GenerationOptions transports =
                GenerationOptions.parse("--brokerd", "b", "--figures", "transport");

        assertThat(transports.figures()).containsExactly("transport");
        assertThat(transports.runsCeilings()).isFalse();
        assertThat(transports.runsComputeOn()).isFalse();
        assertThat(GenerationOptions.parse("--brokerd", "b", "--figures", "4").runsCeilings())
                .isTrue();
        assertThat(GenerationOptions.parse("--brokerd", "b", "--figures", "6").runsCeilings())
                .isTrue();
    }

    @Test
    void eachBadOptionIsNamedInItsOwnMessage() {
        assertThatThrownBy(() -> GenerationOptions.parse("--brokerd", "b", "--fig6reps", "5"))
                .hasMessageContaining("unknown option --fig6reps")
                .hasMessageContaining("--fig6-reps");
        assertThatThrownBy(() -> GenerationOptions.parse("--brokerd", "b", "--figures", "4,7"))
                .hasMessageContaining("unknown figure '7'");
        assertThatThrownBy(() -> GenerationOptions.parse("--brokerd", "b", "--fig6-reps", "0"))
                .hasMessageContaining("--fig6-reps")
                .hasMessageContaining("got '0'");
        assertThatThrownBy(() -> GenerationOptions.parse("--brokerd", "b", "--room-load", "half"))
                .hasMessageContaining("--room-load")
                .hasMessageContaining("got 'half'");
        assertThatThrownBy(
                        () ->
                                GenerationOptions.parse(
                                        "--brokerd",
                                        "b",
                                        "--figures",
                                        "room",
                                        "--topologies",
                                        "one-to-one"))
                .hasMessageContaining("add many-to-many to --topologies");
        assertThatThrownBy(
                        () ->
                                GenerationOptions.parse(
                                        "--brokerd",
                                        "b",
                                        "--figures",
                                        "faults",
                                        "--topologies",
                                        "one-to-one,one-to-many"))
                .hasMessageContaining("add many-to-one or many-to-many to --topologies");
        assertThatThrownBy(() -> GenerationOptions.parse("--brokerd", "b", "--room-load", "1.5"))
                .hasMessageContaining("at most 1, got '1.5'");
        assertThatThrownBy(
                        () ->
                                GenerationOptions.parse(
                                        "--brokerd", "b", "--topologies", "one-to-none"))
                .hasMessageContaining("unknown topology 'one-to-none'");
        assertThatThrownBy(() -> GenerationOptions.parse("--brokerd", "b", "--reps"))
                .hasMessageContaining("'--reps' has none");
        assertThatThrownBy(() -> GenerationOptions.parse("--reps", "3"))
                .hasMessageContaining("--brokerd PATH");
    }
}
