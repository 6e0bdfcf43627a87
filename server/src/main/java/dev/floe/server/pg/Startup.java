package dev.floe.server.pg;

import dev.floe.FloeException;
import dev.floe.SqlState;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A connection's start-up, up to the moment its client is known (pgjdbc's ConnectionFactory side): the
 * SSLRequest (TLS, {@code auth.Tls}) and GSSENCRequest, a CancelRequest (handed to the server; the
 * connection then closes), the StartupMessage's protocol version and parameters, the refusals (too many
 * clients, shutting down, no user, replication, an unknown database, trust from another host), the
 * password exchange ({@link PasswordExchange}), and the parameters' settings. A refusal is a FATAL error,
 * sent here; a start-up timeout is the connection's (the socket's read timeout).
 */
final class Startup {
  private static final int SSL_REQUEST = 80877103;
  private static final int GSSENC_REQUEST = 80877104;
  private static final int CANCEL_REQUEST = 80877102;
  /** The longest start-up packet or password message. */
  static final int MAX_STARTUP = 10_000;

  /** Who logged in, to which database. */
  record Login(String user, String database) {}

  private final PgServer server;
  private final Socket socket;
  private final ClientWriter writer;
  private final Settings settings;
  private final boolean overCapacity;
  private DataInputStream in;
  /** The socket the client's bytes come through (the TLS one once TLS started). */
  private Socket wire;
  /** Whether the connection switched to TLS. */
  private boolean tls;

  Startup(PgServer server, Socket socket, DataInputStream in, ClientWriter writer, Settings settings,
      boolean overCapacity) {
    this.server = server;
    this.socket = socket;
    this.in = in;
    this.wire = socket;
    this.writer = writer;
    this.settings = settings;
    this.overCapacity = overCapacity;
  }

  /** What the client sends, once start-up is over (through TLS if it started). */
  DataInputStream in() {
    return in;
  }

  /** The socket the client's bytes come through (the TLS one once TLS started). */
  Socket wire() {
    return wire;
  }

  /**
   * Reads start-up packets up to the StartupMessage and authenticates its user. Null when the connection is
   * to close now: a CancelRequest (which gets no answer), or a refusal (its FATAL error sent).
   */
  Login run() throws IOException {
    while (true) {
      int length = in.readInt();
      if (length < 8 || length > MAX_STARTUP) {
        throw ProtocolException.framing("invalid length of startup packet");
      }
      byte[] body = new byte[length - 4];
      in.readFully(body);
      MessageBuffer m = new MessageBuffer((byte) 0, body);
      int code = m.int32("protocol version");
      if (code == SSL_REQUEST && server.config().tls() != null && !tls) {
        m.end();
        synchronized (writer.lock()) {
          writer.out().raw('S');
          javax.net.ssl.SSLSocket ssl = (javax.net.ssl.SSLSocket) server.config().tls().getSocketFactory()
              .createSocket(socket, socket.getInetAddress().getHostAddress(), socket.getPort(), true);
          ssl.setUseClientMode(false);
          ssl.startHandshake();
          wire = ssl;
          in = new DataInputStream(new BufferedInputStream(ssl.getInputStream(), 16 * 1024));
          writer.use(ssl.getOutputStream());
          tls = true;
        }
        continue;
      }
      if (code == SSL_REQUEST || code == GSSENC_REQUEST) {
        m.end();
        synchronized (writer.lock()) {
          writer.out().raw('N'); // no (further) encryption: the client goes on as it is
        }
        continue;
      }
      if (code == CANCEL_REQUEST) {
        int pid = m.int32("process id");
        int key = m.int32("secret key");
        server.cancel(pid, key);
        return null; // a cancel request gets no answer; the connection just closes
      }
      int major = code >>> 16;
      int minor = code & 0xffff;
      if (major != 3) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "unsupported frontend protocol " + major + "."
            + minor + ": server supports 3.0 to 3.0");
      }
      Map<String, String> params = new java.util.LinkedHashMap<>();
      List<String> unknownOptions = new ArrayList<>();
      while (true) {
        String name = m.cstring("parameter name");
        if (name.isEmpty()) {
          break;
        }
        String value = m.cstring("parameter value");
        if (name.startsWith("_pq_.")) {
          unknownOptions.add(name);
        } else {
          params.put(name, value);
        }
      }
      m.end();
      if (minor > 0 || !unknownOptions.isEmpty()) {
        synchronized (writer.lock()) {
          MessageWriter out = writer.out();
          out.begin('v').int32(0).int32(unknownOptions.size());
          for (String o : unknownOptions) {
            out.cstring(o);
          }
          out.end();
        }
      }
      return authenticate(params);
    }
  }

  /** The refusals, the password exchange and the parameters' settings; the login, or null when refused. */
  private Login authenticate(Map<String, String> params) throws IOException {
    if (overCapacity) {
      writer.fatal(SqlState.TOO_MANY_CONNECTIONS, "sorry, too many clients already");
      return null;
    }
    if (server.isShuttingDown()) {
      writer.fatal(SqlState.CANNOT_CONNECT_NOW, "the database system is shutting down");
      return null;
    }
    String user = params.get("user");
    if (user == null || user.isEmpty()) {
      writer.fatal(SqlState.INVALID_AUTHORIZATION_SPECIFICATION, "no PostgreSQL user name specified in startup packet");
      return null;
    }
    if (params.containsKey("replication") && !params.get("replication").equalsIgnoreCase("false")) {
      writer.fatal(SqlState.FEATURE_NOT_SUPPORTED, "Floe does not serve replication connections");
      return null;
    }
    String database = params.getOrDefault("database", user);
    if (database.isEmpty()) {
      database = user;
    }
    if (!server.databaseNames().contains(database)) {
      writer.fatal(SqlState.INVALID_CATALOG_NAME, "database \"" + database + "\" does not exist");
      return null;
    }
    InetAddress peer = socket.getInetAddress();
    AuthMethod method = server.config().auth();
    if (method == AuthMethod.TRUST && !peer.isLoopbackAddress()) {
      writer.fatal(SqlState.INVALID_AUTHORIZATION_SPECIFICATION, "no authentication method allows host \""
          + peer.getHostAddress() + "\", user \"" + user + "\": trust authentication is for loopback connections");
      return null;
    }
    if (method != AuthMethod.TRUST
        && !new PasswordExchange(server, in, writer).check(method, user, peer.getHostAddress())) {
      return null;
    }
    try {
      settings.setAtStartup("session_authorization", user);
      for (Map.Entry<String, String> e : params.entrySet()) {
        switch (e.getKey()) {
          case "user", "database", "replication" -> { }
          case "options" -> settings.applyOptions(e.getValue());
          default -> settings.setAtStartup(e.getKey(), e.getValue());
        }
      }
    } catch (FloeException e) {
      writer.fatal(e.sqlState(), e.getMessage());
      return null;
    }
    return new Login(user, database);
  }
}
