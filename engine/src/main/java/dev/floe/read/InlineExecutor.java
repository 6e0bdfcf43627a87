package dev.floe.read;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * An executor that runs each task on the thread that submits it, for Iceberg's work Floe hands it.
 *
 * <p>Iceberg gives manifest scans and writes ({@code write.Commits}) and delete-file loads
 * ({@link DeletionVectors#loader}) to a worker pool and waits for them by polling every 10 ms, which
 * alone cost a one-file commit, or a delete load however small, 10 ms or more while the work takes well
 * under one. With this executor every future is complete before it is polled. It cannot be shut down.
 */
public final class InlineExecutor extends AbstractExecutorService {
  public static final ExecutorService INSTANCE = new InlineExecutor();

  private InlineExecutor() {}

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
