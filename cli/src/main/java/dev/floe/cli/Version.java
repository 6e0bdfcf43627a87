package dev.floe.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import picocli.CommandLine.IVersionProvider;

/** {@code floe --version}: Floe's version and those of the engines it embeds, from the build. */
final class Version implements IVersionProvider {

  /** Floe's version, e.g. {@code 0.1.0}. */
  static String floe() {
    return properties().getProperty("floe", "unknown");
  }

  @Override
  public String[] getVersion() {
    Properties p = properties();
    return new String[] {
        "floe " + p.getProperty("floe", "unknown"),
        "Apache Iceberg " + p.getProperty("iceberg", "unknown") + ", DuckDB JDBC " + p.getProperty("duckdb-jdbc",
            "unknown") + ", Java " + System.getProperty("java.version")
    };
  }

  private static Properties properties() {
    Properties p = new Properties();
    try (InputStream in = Version.class.getResourceAsStream("version.properties")) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return p;
  }
}
