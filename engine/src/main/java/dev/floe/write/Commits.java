package dev.floe.write;

import java.util.concurrent.ExecutorService;
import org.apache.iceberg.SnapshotUpdate;

/**
 * How Floe runs Iceberg snapshot updates: on the calling thread.
 *
 * <p>Iceberg hands manifest scans and writes to a worker pool and waits for them by polling every
 * 10 ms, which alone costs a one-file commit tens of milliseconds while the work takes well under one.
 * Running the tasks inline ({@link dev.floe.read.InlineExecutor}) makes every future complete before it
 * is polled.
 */
public final class Commits {
  private static final ExecutorService INLINE = dev.floe.read.InlineExecutor.INSTANCE;

  private Commits() {}

  /** The update, set to scan and write its manifests on the calling thread. */
  public static <T extends SnapshotUpdate<T>> T inline(T update) {
    return update.scanManifestsWith(INLINE).writeManifestsWith(INLINE, 1);
  }
}
