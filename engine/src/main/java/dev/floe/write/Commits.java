package dev.floe.write;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.SnapshotUpdate;

/**
 * How Floe runs Iceberg snapshot updates: on the calling thread.
 *
 * <p>Iceberg hands manifest scans and writes to a worker pool and waits for them by polling every
 * 10 ms, which alone costs a one-file commit tens of milliseconds while the work takes well under one.
 * Running the tasks inline makes every future complete before it is polled.
 */
public final class Commits {
  private static final ExecutorService INLINE = new Inline();

  private Commits() {}

  /** The update, set to scan and write its manifests on the calling thread. */
  public static <T extends SnapshotUpdate<T>> T inline(T update) {
    return update.scanManifestsWith(INLINE).writeManifestsWith(INLINE, 1);
  }

  /** An executor that runs each task in the submitting thread; it cannot be shut down. */
  private static final class Inline extends AbstractExecutorService {
    @Override
    public void execute(Runnable command) {
      command.run();
    }

    @Override
    public void shutdown() {}

    @Override
    public List<Runnable> shutdownNow() {
      return List.of();
    }

    @Override
    public boolean isShutdown() {
      return false;
    }

    @Override
    public boolean isTerminated() {
      return false;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
      return false;
    }
  }
}
