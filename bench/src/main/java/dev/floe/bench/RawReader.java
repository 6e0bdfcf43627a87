package dev.floe.bench;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A minimal PostgreSQL-protocol client that reads a result's messages and throws them away: what a server
 * sends, timed without a client's parsing (psql's formatting, psycopg2's Python objects and pgjdbc's
 * decoding cost more than either server's sending of the same rows). Trust authentication only.
 */
final class RawReader implements AutoCloseable {
  /** What a drained result held. */
  record Drained(long dataRows, long bytes) {}

  private final Socket socket;
  private final DataInputStream in;
  private final DataOutputStream out;
  private byte[] buffer = new byte[1 << 16];

  RawReader(int port, String user, String database) throws IOException {
    socket = new Socket("127.0.0.1", port);
    socket.setTcpNoDelay(true); // as drivers do: an Execute per batch must not wait for a delayed ACK
    in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 1 << 16));
    out = new DataOutputStream(socket.getOutputStream());
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    DataOutputStream d = new DataOutputStream(body);
    d.writeInt(196_608); // protocol 3.0
    for (String s : new String[] {"user", user, "database", database}) {
      cstring(d, s);
    }
    d.write(0);
    out.writeInt(body.size() + 4);
    body.writeTo(out);
    out.flush();
    drainUntilReady();
  }

  /** A simple Query; its whole answer read until ReadyForQuery. */
  Drained query(String sql) throws IOException {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    cstring(new DataOutputStream(body), sql);
    message('Q', body.toByteArray());
    out.flush();
    return drainUntilReady();
  }

  /**
   * The extended protocol as pgjdbc uses it with a fetch size: Parse, Bind, Describe, then Execute of
   * {@code batch} rows and Flush until CommandComplete, then Sync. Run inside a transaction block (as
   * pgjdbc does) when the caller has sent BEGIN.
   */
  Drained portal(String sql, int batch) throws IOException {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    DataOutputStream d = new DataOutputStream(body);
    cstring(d, "");
    cstring(d, sql);
    d.writeShort(0);
    message('P', body.toByteArray());
    body.reset();
    cstring(d, "");
    cstring(d, "");
    d.writeShort(0); // parameter formats
    d.writeShort(0); // parameters
    d.writeShort(0); // result formats: text
    message('B', body.toByteArray());
    message('D', new byte[] {'P', 0});
    body.reset();
    cstring(d, "");
    d.writeInt(batch);
    byte[] execute = body.toByteArray();
    message('E', execute);
    message('H', new byte[0]);
    out.flush();
    Drained portal = drainUntil('C', () -> { // each PortalSuspended asks for the next batch
      message('E', execute);
      message('H', new byte[0]);
      out.flush();
    });
    message('S', new byte[0]);
    out.flush();
    Drained rest = drainUntilReady();
    return new Drained(portal.dataRows() + rest.dataRows(), portal.bytes() + rest.bytes());
  }

  private interface Suspended {
    void resume() throws IOException;
  }

  private int length;

  /** The next message's type; its body is read into the buffer ({@link #length} bytes). */
  private int next() throws IOException {
    int type = in.read();
    if (type < 0) {
      throw new IOException("the server closed the connection");
    }
    length = in.readInt() - 4;
    if (length > buffer.length) {
      buffer = new byte[length];
    }
    in.readFully(buffer, 0, length);
    if (type == 'E') {
      throw new IOException("server error: " + new String(buffer, 0, length, StandardCharsets.UTF_8)
          .replace('\0', ' '));
    }
    return type;
  }

  private Drained drainUntilReady() throws IOException {
    return drainUntil('Z', () -> { });
  }

  /** Reads messages up to one of type {@code end}, counting DataRows and bytes. */
  private Drained drainUntil(char end, Suspended suspended) throws IOException {
    long rows = 0;
    long bytes = 0;
    while (true) {
      int type = next();
      bytes += 5 + length;
      if (type == 'D') {
        rows++;
      } else if (type == 's') {
        suspended.resume();
      } else if (type == end) {
        return new Drained(rows, bytes);
      }
    }
  }

  private void message(int type, byte[] body) throws IOException {
    out.write(type);
    out.writeInt(body.length + 4);
    out.write(body);
  }

  private static void cstring(DataOutputStream d, String s) throws IOException {
    d.write(s.getBytes(StandardCharsets.UTF_8));
    d.write(0);
  }

  @Override
  public void close() throws IOException {
    message('X', new byte[0]);
    out.flush();
    socket.close();
  }
}
