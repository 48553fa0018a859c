package dev.sluice.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The CPU time every process and the kernel spent on this machine, from {@code /proc/stat}: what a
 * run that spans several processes (broker, Flink, daemon, readers) and the kernel's loopback
 * networking cost in all. Idle, I/O wait and the time the hypervisor stole are not in it.
 */
final class MachineCpu {
    private MachineCpu() {}

    /** Busy CPU-seconds of all cores since boot: user, nice, system, irq and softirq time. */
    static double busySeconds() throws IOException {
        String first = Files.readAllLines(Path.of("/proc/stat")).get(0);
        // "cpu  user nice system idle iowait irq softirq steal guest guest_nice"; guest time is
        // already in user.
        String[] fields = first.trim().split("\\s+");
        if (!fields[0].equals("cpu")) {
            throw new IOException("/proc/stat does not start with the cpu line: " + first);
        }
        long busy = 0;
        for (int field : new int[] {1, 2, 3, 6, 7}) {
            busy += Long.parseLong(fields[field]);
        }
        return busy / (double) ChildProcess.CLOCK_TICKS;
    }
}
