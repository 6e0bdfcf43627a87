package dev.floe.server.pg;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

/**
 * What a client sends, read through one buffered stream, with a way to notice the client going away while
 * a statement runs and nothing reads: {@link #watch} reads ahead on another thread (keeping what it reads
 * for the protocol reader) until the statement ends, and reports end of stream. A statement whose client
 * disconnected is then cancelled, so it commits nothing (PostgreSQL's client_connection_check_interval).
 */
final class ClientInput extends InputStream {
  /** How often a watcher looks again whether its statement has ended. */
  private static final int POLL_MILLIS = 20;
  /** Read-ahead beyond which a watcher stops: the client is clearly there, sending. */
  private static final int MAX_HELD = 1 << 20;

  private final Socket socket;
  private final InputStream source;
  /** Bytes a watcher read ahead, served before the source's. Touched by one thread at a time. */
  private byte[] held = new byte[0];
  private int heldPos;
  private int heldEnd;

  ClientInput(Socket socket, InputStream source) {
    this.socket = socket;
    this.source = source;
  }

  @Override
  public int read() throws IOException {
    if (heldPos < heldEnd) {
      return held[heldPos++] & 0xff;
    }
    return source.read();
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    if (heldPos < heldEnd) {
      int n = Math.min(len, heldEnd - heldPos);
      System.arraycopy(held, heldPos, b, off, n);
      heldPos += n;
      return n;
    }
    return source.read(b, off, len);
  }

  @Override
  public int available() throws IOException {
    return heldEnd - heldPos + source.available();
  }

  /** A watcher started by {@link #watch}; {@link #stop} returns once it no longer reads. */
  interface Watch {
    void stop();
  }

  /**
   * Reads ahead on {@code pool} until stopped, calling {@code onGone} if the client closes the
   * connection. The caller must not read from this stream until {@link Watch#stop} returned.
   */
  Watch watch(ExecutorService pool, Runnable onGone) {
    boolean[] stopped = {false};
    Future<?> task = pool.submit(() -> {
      byte[] buf = new byte[8192];
      try {
        socket.setSoTimeout(POLL_MILLIS);
        while (!stopped(stopped) && heldEnd - heldPos < MAX_HELD) {
          int n;
          try {
            n = source.read(buf, 0, buf.length);
          } catch (SocketTimeoutException e) {
            continue;
          }
          if (n < 0) {
            onGone.run();
            return;
          }
          hold(buf, n);
        }
      } catch (IOException e) {
        onGone.run();
      } finally {
        try {
          socket.setSoTimeout(0);
        } catch (IOException ignored) {
          // the socket is gone; the protocol reader will find out
        }
      }
    });
    return () -> {
      synchronized (stopped) {
        stopped[0] = true;
      }
      try {
        task.get();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (java.util.concurrent.ExecutionException e) {
        // the watcher failed; the protocol reader finds the connection's state itself
      }
    };
  }

  private static boolean stopped(boolean[] flag) {
    synchronized (flag) {
      return flag[0];
    }
  }

  private void hold(byte[] buf, int n) {
    if (heldEnd + n > held.length) {
      int live = heldEnd - heldPos;
      byte[] grown = live + n > held.length ? new byte[Math.max(held.length * 2, live + n)] : held;
      System.arraycopy(held, heldPos, grown, 0, live);
      held = grown;
      heldEnd = live;
      heldPos = 0;
    }
    System.arraycopy(buf, 0, held, heldEnd, n);
    heldEnd += n;
  }
}
