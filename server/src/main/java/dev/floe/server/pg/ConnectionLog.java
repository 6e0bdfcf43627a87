package dev.floe.server.pg;

import dev.floe.FloeException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an operator reads about one connection, as PostgreSQL's {@code log_connections},
 * {@code log_disconnections}, errors with their statement ({@code log_min_error_statement}) and
 * {@code log_min_duration_statement} log it: one line per event, {@code key=value} pairs after a fixed
 * event name, so that {@code grep 'event=error'} or {@code grep 'pid=1004'} finds them. The lines go to
 * the logger {@value #NAME} at INFO (errors of clients are theirs, not the server's: INFO, not ERROR).
 * Used on the connection's own thread only.
 */
final class ConnectionLog {
  /** The logger's name: {@code floe serve} turns it on. */
  static final String NAME = "dev.floe.server.log";
  private static final Logger LOG = LoggerFactory.getLogger(NAME);

  private final int pid;
  private final long minDurationNanos;
  private final long startNanos = System.nanoTime();
  private String client = "";
  private String user = "";
  /** The statement running, for its lines; null between statements. */
  private String statement;
  private long statementStart;
  /** The last error logged with its statement: the client is sent it next, and it is not logged twice. */
  private FloeException logged;

  ConnectionLog(int pid, long minDurationMs) {
    this.pid = pid;
    this.minDurationNanos = minDurationMs < 0 ? -1 : minDurationMs * 1_000_000L;
  }

  /** The server's start: one line of what it serves and how. */
  static void listening(String host, int port, PgServer.Config config) {
    LOG.info("event=listening host={} port={} auth={} tls={} max_connections={} max_statement_time={} "
        + "log_min_duration_ms={}", host, port, config.auth().name().toLowerCase(Locale.ROOT).replace('_', '-'),
        config.tls() == null ? "off" : "on", config.maxConnections(), config.maxStatementTime(),
        config.logMinDurationMs());
  }

  void received(SocketAddress remote) {
    client = remote instanceof InetSocketAddress a ? a.getAddress().getHostAddress() + ":" + a.getPort()
        : String.valueOf(remote);
    LOG.info("event=connection_received pid={} client={}", pid, client);
  }

  void authorized(String user, String database, String application, boolean tls) {
    this.user = user;
    LOG.info("event=connection_authorized pid={} client={} user={} database={} application_name={} tls={}", pid,
        client, quote(user), quote(database), quote(application), tls ? "on" : "off");
  }

  /** A FATAL sent to the client: a failed login (28xxx), a refused start-up, a terminated session. */
  void fatal(String sqlState, String message) {
    String event = sqlState.startsWith("28") ? "authentication_failed" : "fatal";
    LOG.info("event={} pid={} client={} user={} sqlstate={} message={}", event, pid, client, quote(user), sqlState,
        quote(message));
  }

  void statementStarted(String text) {
    statement = text;
    statementStart = System.nanoTime();
  }

  /**
   * The statement ended: its duration is logged if it ran at least the threshold, and its error, if it
   * failed, with its text.
   */
  void statementEnded(RuntimeException failure) {
    if (statement == null) {
      return;
    }
    long nanos = System.nanoTime() - statementStart;
    if (minDurationNanos >= 0 && nanos >= minDurationNanos) {
      LOG.info("event=duration pid={} user={} duration_ms={} statement={}", pid, quote(user),
          String.format(Locale.ROOT, "%.3f", nanos / 1e6), quote(statement));
    }
    if (failure instanceof FloeException e) {
      LOG.info("event=error pid={} user={} sqlstate={} message={} statement={}", pid, quote(user), e.sqlState(),
          quote(e.getMessage()), quote(statement));
      logged = e;
    }
    statement = null;
  }

  /** An error sent to the client; one a statement raised was logged with its text already. */
  void error(FloeException e) {
    if (e != logged) {
      LOG.info("event=error pid={} user={} sqlstate={} message={}", pid, quote(user), e.sqlState(),
          quote(e.getMessage()));
    }
    logged = null;
  }

  void disconnected() {
    LOG.info("event=disconnection pid={} client={} user={} session_time={}", pid, client, quote(user),
        String.format(Locale.ROOT, "%.3fs", (System.nanoTime() - startNanos) / 1e9));
  }

  /**
   * A value as one token: bare when it is plain, else in double quotes with {@code "} and {@code \}
   * escaped and line breaks as {@code \n}, so that a line is one event whatever a statement holds.
   */
  static String quote(String value) {
    if (value == null) {
      return "\"\"";
    }
    if (!value.isEmpty() && value.chars().allMatch(c -> c > ' ' && c < 127 && c != '"' && c != '\\' && c != '=')) {
      return value;
    }
    StringBuilder b = new StringBuilder(value.length() + 2).append('"');
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> b.append(c < ' ' ? ' ' : c);
      }
    }
    return b.append('"').toString();
  }
}
