package dev.floe.catalog;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The files a commit will name, made durable together just before its catalog swap.
 *
 * <p>New table files (data and delete files, manifests, manifest lists, table metadata) are written
 * without waiting for the disk: each is registered here by the thread that writes it. The committing
 * thread, which is the same one (Floe runs Iceberg's manifest work inline, see
 * {@code dev.floe.write.Commits}), then fsyncs all of them and their directories at once, in
 * parallel, so the file system can merge the flushes, instead of one fsync after another per file.
 * Nothing names a file before {@link #now()} has returned for it, so a crash can lose only files that
 * no committed metadata references.
 */
public final class Durable {
  private static final ThreadLocal<Set<Path>> PENDING = ThreadLocal.withInitial(LinkedHashSet::new);
  private static final ExecutorService FSYNC = Executors.newFixedThreadPool(16, r -> {
    Thread t = new Thread(r, "floe-fsync");
    t.setDaemon(true);
    return t;
  });

  private Durable() {}

  /** Registers a file just written (or moved into place) by this thread; its directory comes with it. */
  public static void later(Path file) {
    PENDING.get().add(file.toAbsolutePath());
  }

  /** Drops this thread's registrations (the statement that wrote them failed or wrote nothing). */
  public static void forget() {
    PENDING.get().clear();
  }

  /**
   * fsyncs every file this thread registered, and each of their directories, and returns when all are
   * on disk. A registered file that is gone (an abandoned write, deleted since) is skipped.
   */
  public static void now() {
    Set<Path> files = PENDING.get();
    if (files.isEmpty()) {
      return;
    }
    Set<Path> targets = new LinkedHashSet<>(files);
    for (Path f : files) {
      if (f.getParent() != null) {
        targets.add(f.getParent());
      }
    }
    files.clear();
    if (targets.size() == 1) {
      sync(targets.iterator().next());
      return;
    }
    List<Future<?>> running = new ArrayList<>();
    for (Path p : targets) {
      running.add(FSYNC.submit(() -> sync(p)));
    }
    RuntimeException failure = null;
    for (Future<?> f : running) {
      try {
        f.get();
      } catch (ExecutionException e) {
        if (failure == null) {
          failure = e.getCause() instanceof RuntimeException r ? r : new UncheckedIOException(
              new IOException(e.getCause()));
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new UncheckedIOException(new java.io.InterruptedIOException("interrupted waiting for fsync"));
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  private static void sync(Path p) {
    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
      ch.force(true);
    } catch (NoSuchFileException e) {
      // deleted since it was written: nothing will name it
    } catch (IOException e) {
      throw new UncheckedIOException("Failed to sync " + p, e);
    }
  }
}
