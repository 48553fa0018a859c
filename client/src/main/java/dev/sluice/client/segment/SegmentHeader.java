package dev.sluice.client.segment;

import dev.sluice.client.annotation.PublicEvolving;

/**
 * The immutable part of a segment's header, validated. Offsets and sizes are in bytes from the
 * start of the file, as in {@code docs/formats.md}.
 */
@PublicEvolving
public record SegmentHeader(
        boolean checksums,
        int slotCount,
        int laneCount,
        long slotSize,
        long segmentSize,
        long laneTableOffset,
        long laneSize,
        int ringCapacity,
        int schemaLength,
        long descriptorTableOffset,
        long slotDataOffset,
        long livenessTimeoutNanos,
        ObjectKind objectKind,
        int headerSize) {}
