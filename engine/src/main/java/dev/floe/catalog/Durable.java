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
 * The files a commit will name, made durable before its catalog swap.
 *
 * <p>New table files (data and delete files, manifests, manifest lists, table metadata) are written
 * without waiting for the disk: each is registered here by the thread that writes it, as soon as it is
 * complete, and its fsync starts at once on a background thread, so it overlaps with the rest of the
 * statement (writing the next file, building the snapshot). The committing thread, which is the same
 * one (Floe runs Iceberg's manifest work inline, see {@code dev.floe.write.Commits}), then fsyncs the
 * directories the files were created in and waits for every fsync in {@link #now()}. Nothing names a
 * file before {@code now()} has returned for it, so a crash can lose only files that no committed
 * metadata references.
 *
 * <p>The fsync task also takes each table file's CRC-32C while the file is still in the page cache
 * ({@link FileDigests}): {@code now()} returns them, and the commit records them with its catalog swap.
 */
public final class Durable {
  private static final ThreadLocal<Batch> PENDING = ThreadLocal.withInitial(Batch::new);
  private static final ExecutorService FSYNC = Executors.newFixedThreadPool(16, r -> {
    Thread t = new Thread(r, "floe-fsync");
    t.setDaemon(true);
    return t;
  });

  /** One thread's files in flight: their running fsyncs, and the directories still to sync. */
  private static final class Batch {
    final List<Future<FileDigests.Digest>> running = new ArrayList<>();
    final Set<Path> directories = new LinkedHashSet<>();
    /** How many {@link Scope}s are open on the thread. */
    int scopes;

    void clear() {
      running.clear();
      directories.clear();
    }
  }

  private Durable() {}

  /**
   * Registers a file just written (or moved into place) by this thread, and starts its fsync; its
   * directory is synced by {@link #now()}.
   */
  public static void later(Path file) {
    Path p = file.toAbsolutePath();
    Batch batch = PENDING.get();
    batch.running.add(FSYNC.submit(() -> {
      FileDigests.Digest digest = FileDigests.recorded(p) ? FileDigests.compute(p) : null;
      sync(p);
      return digest;
    }));
    if (p.getParent() != null) {
      batch.directories.add(p.getParent());
    }
  }

  /**
   * One unit of work's registrations on this thread (a statement, a block's commit): what it registers
   * and does not commit (it failed, or wrote nothing) is dropped when the outermost scope closes, and
   * nothing registered before it opened is part of it. Fsyncs already started finish on their own.
   */
  public static final class Scope implements AutoCloseable {
    private final Batch batch;
    private boolean closed;

    private Scope(Batch batch) {
      this.batch = batch;
    }

    @Override
    public void close() {
      if (!closed) {
        closed = true;
        if (--batch.scopes == 0) {
          batch.clear();
        }
      }
    }
  }

  /** Opens a unit of work's scope on this thread ({@code try (var files = Durable.scope()) {...}}). */
  public static Scope scope() {
    Batch batch = PENDING.get();
    if (batch.scopes++ == 0) {
      batch.clear(); // left by work on this thread that had no scope
    }
    return new Scope(batch);
  }

  /** Files registered by one thread, handed to another that will commit them ({@link #adopt}). */
  public static final class Registrations {
    private final Batch batch;

    private Registrations(Batch batch) {
      this.batch = batch;
    }
  }

  /**
   * Takes this thread's registrations away from it: a thread that writes files for another's commit
   * ends its work with this, and the committing thread {@link #adopt adopts} them.
   */
  public static Registrations take() {
    Batch batch = PENDING.get();
    Batch taken = new Batch();
    taken.running.addAll(batch.running);
    taken.directories.addAll(batch.directories);
    batch.clear();
    return new Registrations(taken);
  }

  /** Makes files another thread registered part of this thread's next {@link #now()}. */
  public static void adopt(Registrations registrations) {
    Batch batch = PENDING.get();
    batch.running.addAll(registrations.batch.running);
    batch.directories.addAll(registrations.batch.directories);
  }

  /**
   * Returns when every file this thread registered, and each of their directories, is on disk. A
   * registered file that is gone (an abandoned write, deleted since) is skipped.
   *
   * @return the CRC-32C of each table file among them, for the commit to record
   */
  public static List<FileDigests.Digest> now() {
    Batch batch = PENDING.get();
    if (batch.running.isEmpty() && batch.directories.isEmpty()) {
      return List.of();
    }
    List<Future<FileDigests.Digest>> waiting = new ArrayList<>(batch.running);
    List<Path> directories = new ArrayList<>(batch.directories);
    batch.clear();
    // The last directory is synced on this thread while the others run in the pool.
    for (int k = 0; k < directories.size() - 1; k++) {
      Path dir = directories.get(k);
      waiting.add(FSYNC.submit(() -> {
        sync(dir);
        return null;
      }));
    }
    List<FileDigests.Digest> digests = new ArrayList<>();
    RuntimeException failure = null;
    if (!directories.isEmpty()) {
      try {
        sync(directories.get(directories.size() - 1));
      } catch (RuntimeException e) {
        failure = e;
      }
    }
    for (Future<FileDigests.Digest> f : waiting) {
      try {
        FileDigests.Digest d = f.get();
        if (d != null) {
          digests.add(d);
        }
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
    return digests;
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
