package dev.sluice.benchmarks;

import java.io.IOException;
import java.util.List;

/**
 * CPU time of each part of the generation runtime on this host, from {@code /proc/PID/stat}: where
 * a run's machine CPU went (benchmarks/README.md, Transport). The harness is this JVM: Flink's
 * MiniCluster with the scheduler, the producers and the sink.
 *
 * @param harness this JVM
 * @param broker the Kafka broker's JVM
 * @param daemon {@code sluice-brokerd}
 * @param readers the output nodes, together
 */
record PartsCpu(double harness, double broker, double daemon, double readers) {
    static final PartsCpu NONE = new PartsCpu(0, 0, 0, 0);

    /** The parts' CPU seconds so far; {@code readers}: the output nodes' processes. */
    static PartsCpu sample(long brokerPid, long daemonPid, List<Long> readers) throws IOException {
        double read = 0;
        for (long pid : readers) {
            read += ChildProcess.cpuSeconds(pid);
        }
        return new PartsCpu(
                ChildProcess.cpuSeconds(ProcessHandle.current().pid()),
                ChildProcess.cpuSeconds(brokerPid),
                ChildProcess.cpuSeconds(daemonPid),
                read);
    }

    PartsCpu minus(PartsCpu before) {
        return new PartsCpu(
                harness - before.harness,
                broker - before.broker,
                daemon - before.daemon,
                readers - before.readers);
    }
}
