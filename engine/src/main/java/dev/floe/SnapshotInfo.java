package dev.floe;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * One version of a table.
 *
 * @param version the snapshot's sequence number: the table's monotonic version integer, as used by
 *     {@code AS OF VERSION n}
 * @param snapshotId Iceberg's snapshot id ({@code FOR VERSION AS OF id})
 * @param parentId the previous snapshot, if any
 * @param committedAt when it was committed
 * @param operation Iceberg's operation name: append, overwrite, delete, replace
 * @param summary Iceberg's snapshot summary (added-records, total-records, ...)
 */
public record SnapshotInfo(long version, long snapshotId, Optional<Long> parentId, Instant committedAt,
    String operation, Map<String, String> summary) {}
