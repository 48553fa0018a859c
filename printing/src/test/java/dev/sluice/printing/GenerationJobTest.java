package dev.sluice.printing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.client.job.JobSpec;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GenerationJobTest {

    @Test
    void readsItsArguments() {
        GenerationJob.Settings settings =
                GenerationJob.Settings.parse(
                        new String[] {
                            "--bootstrap-servers", "host1:9092,host2:9092",
                            "--parallelism", "3",
                            "--max-task-size", "8388608",
                            "--output-location-host", "printhead-cyan=host1",
                            "--output-location-host", "printhead-black=host2",
                            "--brokerd-socket", "/run/sluice/brokerd.sock",
                            "--speculation", "false",
                            "--producer-property", "max.request.size=8388608",
                            "--producer-property", "linger.ms=5"
                        });

        assertThat(settings.bootstrapServers()).isEqualTo("host1:9092,host2:9092");
        assertThat(settings.parallelism()).isEqualTo(3);
        assertThat(settings.maxTaskSizeBytes()).isEqualTo(8 << 20);
        assertThat(settings.checkpointIntervalMillis()).isEqualTo(1000);
        assertThat(settings.outputLocationHosts())
                .isEqualTo(Map.of("printhead-cyan", "host1", "printhead-black", "host2"));
        assertThat(settings.brokerdSocket()).contains(Path.of("/run/sluice/brokerd.sock"));
        assertThat(settings.speculation()).isFalse();
        assertThat(settings.producerProperties())
                .isEqualTo(Map.of("max.request.size", "8388608", "linger.ms", "5"));
    }

    @Test
    void defaultsToTheEnvironmentsParallelismAndTheSpecsDefaultTaskSize() {
        GenerationJob.Settings settings =
                GenerationJob.Settings.parse(new String[] {"--bootstrap-servers", "k:9092"});

        assertThat(settings.parallelism()).isZero();
        assertThat(settings.maxTaskSizeBytes()).isEqualTo(JobSpec.DEFAULT_TASK_SIZE_BYTES);
        assertThat(settings.outputLocationHosts()).isEmpty();
        assertThat(settings.brokerdSocket()).isEmpty();
        assertThat(settings.speculation()).isTrue();
        assertThat(settings.producerProperties()).isEmpty();
    }

    @Test
    void aBadArgumentIsAnErrorNamingIt() {
        assertThatThrownBy(() -> GenerationJob.Settings.parse(new String[] {}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--bootstrap-servers is required");
        assertThatThrownBy(() -> parse("--parallelism", "0"))
                .hasMessage("--parallelism: a positive number, got '0'");
        assertThatThrownBy(() -> parse("--max-task-size", "big"))
                .hasMessage("--max-task-size: a positive number, got 'big'");
        assertThatThrownBy(() -> parse("--output-location-host", "printhead-cyan"))
                .hasMessage("--output-location-host: LOCATION=HOST, got 'printhead-cyan'");
        assertThatThrownBy(() -> parse("--output-location-host", "=host1"))
                .hasMessage("--output-location-host: LOCATION=HOST, got '=host1'");
        assertThatThrownBy(() -> parse("--producer-property", "linger.ms"))
                .hasMessage("--producer-property: KEY=VALUE, got 'linger.ms'");
        assertThatThrownBy(() -> parse("--speculation", "yes"))
                .hasMessage("--speculation: true or false, got 'yes'");
        assertThatThrownBy(() -> parse("--speed", "1")).hasMessage("unknown option --speed");
        assertThatThrownBy(() -> parse("--parallelism")).hasMessage("--parallelism needs a value");
    }

    @Test
    void mainThrowsRatherThanExitingOnBadArguments() {
        // REST runs a job's main in the JobManager: an exit would end the JobManager.
        assertThatThrownBy(() -> GenerationJob.main(new String[] {"--parallelism", "x"}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("generation job: --parallelism: a positive number")
                .hasMessageContaining("usage: --bootstrap-servers");
    }

    private static GenerationJob.Settings parse(String... extra) {
        String[] args = new String[extra.length + 2];
        args[0] = "--bootstrap-servers";
        args[1] = "k:9092";
        System.arraycopy(extra, 0, args, 2, extra.length);
        return GenerationJob.Settings.parse(args);
    }
}
