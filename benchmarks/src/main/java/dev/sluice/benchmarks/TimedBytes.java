package dev.sluice.benchmarks;

/** Bytes an anchor of the generation benchmark moved, over how long, and the machine's CPU. */
record TimedBytes(long bytes, double seconds, double cpuSeconds) {}
