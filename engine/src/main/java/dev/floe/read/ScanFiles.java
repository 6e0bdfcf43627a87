package dev.floe.read;

/**
 * What scans learn from a table's files and keep for later scans of the same files (one per engine):
 * the physical columns of files written without field ids, and staged deletion vectors.
 */
public record ScanFiles(FileFooters footers, DeletionVectors vectors) {}
