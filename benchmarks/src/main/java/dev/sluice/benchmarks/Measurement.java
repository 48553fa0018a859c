package dev.sluice.benchmarks;

/** One run of a system at a record size, as the tables group them. */
interface Measurement {
    String system();

    int size();
}
