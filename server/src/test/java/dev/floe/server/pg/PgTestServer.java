package dev.floe.server.pg;

import dev.floe.Database;
import dev.floe.Floe;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Properties;

/** A Floe server on a free loopback port over a fresh warehouse, for tests. */
final class PgTestServer implements AutoCloseable {
  final Database db;
  final PgServer server;

  PgTestServer(Path warehouse) throws IOException {
    this(warehouse, PgServer.Config.defaults().withPort(0));
  }

  PgTestServer(Path warehouse, PgServer.Config config) throws IOException {
    db = Floe.open(dev.floe.FloeConfig.builder(warehouse).fenced(true).build());
    server = PgServer.start(db, config);
  }

  String jdbcUrl() {
    return "jdbc:postgresql://127.0.0.1:" + server.port() + "/floe";
  }

  Connection connect() throws SQLException {
    return connect(new Properties());
  }

  Connection connect(Properties props) throws SQLException {
    Properties p = new Properties();
    p.setProperty("user", "tester");
    p.putAll(props);
    return DriverManager.getConnection(jdbcUrl(), p);
  }

  @Override
  public void close() {
    server.shutdown(Duration.ofSeconds(5));
    db.close();
  }
}
