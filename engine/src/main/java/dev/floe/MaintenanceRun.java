package dev.floe;

import java.time.Instant;

/**
 * One maintenance step on one table, taken by the background maintainer or by {@code floe maintain}
 * (docs/maintenance.md).
 *
 * @param startedAt when it started
 * @param table the table, {@code schema.name}
 * @param action {@code compact}, {@code expire}, {@code rewrite_manifests} or {@code remove_orphans}
 * @param trigger why it ran (the figure over its policy's threshold, or {@code by hand})
 * @param filesRemoved files it took out of the table or deleted: data and delete files a compaction
 *     rewrote, files only expired versions referenced and metadata files that left the log, manifests
 *     rewritten, orphans
 * @param filesAdded files it wrote
 * @param bytesRemoved the bytes of the files removed (where known)
 * @param bytesAdded the bytes of the files written
 * @param snapshotsExpired versions expired
 * @param millis how long it took
 * @param outcome {@code done}, {@code dry run}, {@code gave way to concurrent writers ...}, {@code skipped:
 *     ...}, {@code nothing to expire: ...} or {@code failed: ...}
 */
public record MaintenanceRun(Instant startedAt, String table, String action, String trigger, int filesRemoved,
    int filesAdded, long bytesRemoved, long bytesAdded, int snapshotsExpired, long millis, String outcome) {}
