package dev.floe.bench;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;

/** Child process for the startup measurement: open, run one query, print its result, exit. */
public final class FirstResult {
  public static void main(String[] args) throws Exception {
    Path warehouse = Path.of(args[1]);
    if (args[0].equals("floe")) {
      try (Database db = Floe.openReadOnly(warehouse); Result r = db.sql("SELECT count(*) FROM events")) {
        System.out.println("RESULT " + r.toList().get(0).get(0));
      }
    } else {
      // Plain DuckDB is handed the file list (written by the parent), as a user of raw Parquet would be.
      String files = Files.readString(Path.of(args[2]));
      try (Connection c = DriverManager.getConnection("jdbc:duckdb:");
          Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SELECT count(*) FROM read_parquet(" + files + ")")) {
        rs.next();
        System.out.println("RESULT " + rs.getLong(1));
      }
    }
  }
}
