package dev.floe.cli;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ParameterException;

/** Where PostgreSQL is: host, port, database and the TLS mode if one was asked for. */
record PostgresSource(String host, int port, String database, Optional<String> sslmode) {
  /** PostgreSQL's default port. */
  static final int DEFAULT_PORT = 5432;

  private static final Pattern FORM = Pattern.compile("(\\[[0-9A-Fa-f:.]+\\]|[^:/\\[\\]@?]+)(?::(\\d{1,5}))?/"
      + "([^/?]+)(?:\\?(.*))?");

  /**
   * {@code host[:port]/dbname}, with or without {@code postgresql://} (or {@code postgres://}) and
   * {@code jdbc:} before it, and {@code ?sslmode=MODE} after it.
   */
  static PostgresSource parse(String url, picocli.CommandLine cl) {
    String s = url.strip();
    if (s.startsWith("jdbc:")) {
      s = s.substring("jdbc:".length());
    }
    for (String scheme : List.of("postgresql://", "postgres://")) {
      if (s.startsWith(scheme)) {
        s = s.substring(scheme.length());
      }
    }
    if (s.contains("@")) {
      throw new ParameterException(cl, "--postgres takes no user or password: give --user, and the password in "
          + "$PGPASSWORD (or the variable --password-env names)");
    }
    Matcher m = FORM.matcher(s);
    if (!m.matches()) {
      throw new ParameterException(cl, "--postgres is host[:port]/dbname (or postgresql://host[:port]/dbname), was \""
          + url + "\"");
    }
    int port = m.group(2) == null ? DEFAULT_PORT : Integer.parseInt(m.group(2));
    if (port < 1 || port > 65535) {
      throw new ParameterException(cl, "--postgres: port " + port + " is out of range");
    }
    Optional<String> sslmode = Optional.empty();
    if (m.group(4) != null && !m.group(4).isEmpty()) {
      for (String pair : m.group(4).split("&")) {
        int eq = pair.indexOf('=');
        if (eq < 0 || !pair.substring(0, eq).equals("sslmode")) {
          throw new ParameterException(cl, "--postgres: the only parameter taken is sslmode, not \"" + pair + "\"");
        }
        sslmode = Optional.of(pair.substring(eq + 1));
      }
    }
    String host = m.group(1).startsWith("[") ? m.group(1).substring(1, m.group(1).length() - 1) : m.group(1);
    return new PostgresSource(host, port, m.group(3), sslmode);
  }

  /** A plain connection (not a replication one), for the checks this command makes itself. */
  Connection connect(String role, String password) throws SQLException {
    Properties props = new Properties();
    props.setProperty("user", role);
    if (password != null) {
      props.setProperty("password", password);
    }
    props.setProperty("connectTimeout", "10");
    props.setProperty("ApplicationName", "floe cdc follow");
    sslmode.ifPresent(m -> props.setProperty("sslmode", m));
    String h = host.contains(":") ? "[" + host + "]" : host;
    return DriverManager.getConnection("jdbc:postgresql://" + h + ":" + port + "/" + database, props);
  }

  @Override
  public String toString() {
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + port + "/" + database;
  }

  /** An exception's message on one line, with its cause's when the message alone says little. */
  static String describe(Throwable e) {
    String message = firstLine(e.getMessage());
    Throwable cause = e.getCause();
    if (cause != null && cause != e && (message.isEmpty() || message.equals("The connection attempt failed."))) {
      String why = cause instanceof java.net.UnknownHostException ? "unknown host " + cause.getMessage()
          : firstLine(cause.getMessage());
      return (message.isEmpty() ? "" : message + " ") + "(" + (why.isEmpty() ? cause.toString() : why) + ")";
    }
    return message;
  }

  static String firstLine(String message) {
    if (message == null) {
      return "";
    }
    return message.strip().replaceAll("\\s*\\R\\s*", " ");
  }
}
