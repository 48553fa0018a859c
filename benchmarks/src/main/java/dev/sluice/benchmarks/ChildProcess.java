package dev.sluice.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The benchmarks' processes: each side of a measurement runs in a process of its own and reports
 * its measured window as one {@code key=value ...} line, its last on stdout.
 */
final class ChildProcess {
    private ChildProcess() {}

    /**
     * A JVM running {@code main} with this JVM's class path and the flags the readers need, plus
     * those of the environment variable {@code SLUICE_BENCH_JVM_ARGS} (a profiler, say).
     */
    static List<String> java(Class<?> main, List<String> args) {
        List<String> command =
                new ArrayList<>(
                        List.of(
                                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                                "-Xmx512m",
                                // Arrow Java learns the address of the mapped segment.
                                "--add-opens=java.base/java.nio=ALL-UNNAMED",
                                // Agrona (Aeron's buffers) reaches memory through this Unsafe.
                                "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
                                // Readers touch bytes through Agrona's buffers: unchecked.
                                "-Dagrona.disable.bounds.checks=true",
                                // Arrow Java likewise: batches are validated when loaded, so
                                // reads need not check bounds and reference counts each time.
                                "-Darrow.enable_unsafe_memory_access=true",
                                "-Darrow.enable_null_check_for_get=false",
                                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"));
        String extra = System.getenv("SLUICE_BENCH_JVM_ARGS");
        if (extra != null && !extra.isBlank()) {
            command.addAll(List.of(extra.trim().split("\\s+")));
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(args);
        return command;
    }

    static Process start(List<String> command) throws IOException {
        return start(command, Map.of());
    }

    /** Starts the command with these variables added to this process's environment. */
    static Process start(List<String> command, Map<String, String> environment) throws IOException {
        ProcessBuilder builder =
                new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
        builder.environment().putAll(environment);
        return builder.start();
    }

    /** Runs the command to its end and returns its result line. */
    static Map<String, String> run(List<String> command) throws IOException, InterruptedException {
        return result(start(command));
    }

    /** The process's last stdout line as key=value pairs, once it exited cleanly. */
    static Map<String, String> result(Process process) throws IOException, InterruptedException {
        String last = null;
        try (BufferedReader lines =
                new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = lines.readLine()) != null; ) {
                last = line;
            }
        }
        check(process);
        return keyValues(last);
    }

    /** Waits for the process and fails unless it exited cleanly. */
    static void check(Process process) throws InterruptedException {
        int exit = process.waitFor();
        if (exit != 0) {
            throw new IllegalStateException(
                    "pid " + process.pid() + " exited " + exit + " (its stderr is above)");
        }
    }

    static Map<String, String> keyValues(String line) {
        if (line == null) {
            throw new IllegalStateException("no result line");
        }
        Map<String, String> values = new HashMap<>();
        for (String pair : line.trim().split(" ")) {
            int equals = pair.indexOf('=');
            values.put(pair.substring(0, equals), pair.substring(equals + 1));
        }
        return values;
    }

    /**
     * CPU time a running process has used so far (user and system, every thread), from {@code
     * /proc/PID/stat}, in seconds; its resolution is the kernel's clock tick.
     */
    static double cpuSeconds(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        // Fields after the command name, which is in parentheses and may hold spaces.
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]); // utime, stime
        return ticks / (double) CLOCK_TICKS;
    }

    // USER_HZ: 100 on every Linux this runs on (sysconf(_SC_CLK_TCK) is not reachable from Java).
    static final int CLOCK_TICKS = 100;
}
