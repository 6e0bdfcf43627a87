package dev.floe.bench;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.Result;
import dev.floe.Row;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * The end-to-end lag of a followed PostgreSQL table (issue 23, docs/cdc-postgres.md): PostgreSQL 15 with
 * logical WAL, pgbench's simple-update load on {@code pgbench_accounts} at {@code --tps}, and
 * {@code bin/floe cdc follow} (its own process, as a user runs it) folding the table into Floe. A probe
 * updates one of 100 rows pgbench never touches every {@code --probe-ms}; a read-only Floe beside the
 * follower polls those rows; the lag is from the probe's COMMIT returning to the value being visible in
 * Floe. Also the follower's commits per minute.
 *
 * <p>Usage: {@code CdcLagBench [--scale 1] [--tps 500] [--seconds 60] [--probe-ms 200] [--window-ms 1000]
 * [--batch N] [--data DIR] [--out FILE]} ({@code --batch}: the follower's, its own default if not given)
 */
public final class CdcLagBench {
  private CdcLagBench() {}

  public static void main(String[] args) throws Exception {
    int scale = 1;
    int tps = 500;
    int seconds = 60;
    long probeMs = 200;
    long windowMs = 1000;
    Integer batch = null;
    Path data = Path.of("bench/data");
    Path out = Path.of("bench/RESULTS.md");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--scale" -> scale = Integer.parseInt(args[++i]);
        case "--tps" -> tps = Integer.parseInt(args[++i]);
        case "--seconds" -> seconds = Integer.parseInt(args[++i]);
        case "--probe-ms" -> probeMs = Long.parseLong(args[++i]);
        case "--window-ms" -> windowMs = Long.parseLong(args[++i]);
        case "--batch" -> batch = Integer.parseInt(args[++i]);
        case "--data" -> data = Path.of(args[++i]);
        case "--out" -> out = Path.of(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Path dir = data.toAbsolutePath().normalize().resolve("cdc-lag");
    MutationBench.deleteTree(dir);
    Files.createDirectories(dir);
    int port = TransactionBench.freePort();
    Path cluster = dir.resolve("pg");
    Files.createDirectories(cluster);
    if ("root".equals(System.getProperty("user.name"))) {
      PgWireBench.Postgres.run(List.of("chown", "postgres:postgres", cluster.toString()), false);
    }
    PgWireBench.Postgres.run(List.of(PgWireBench.Postgres.tool("initdb"), "-D", cluster.toString(), "-U", "floe",
        "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"), true);
    PgWireBench.Postgres.run(List.of(PgWireBench.Postgres.tool("pg_ctl"), "-D", cluster.toString(), "-l",
        cluster.resolve("server.log").toString(), "-w", "-t", "120", "-o", "-p " + port + " -k /tmp "
        + "-c listen_addresses=127.0.0.1 -c wal_level=logical -c max_replication_slots=4 -c max_wal_senders=4",
        "start"), true);
    Process follower = null;
    try {
      String host = "127.0.0.1";
      PgWireBench.Postgres.run(List.of(PgWireBench.Postgres.tool("pgbench"), "-i", "-q", "-s", Integer.toString(scale),
          "-h", host, "-p", Integer.toString(port), "-U", "floe", "postgres"), false);
      long accounts = 100_000L * scale;
      Properties props = new Properties();
      props.setProperty("user", "floe");
      try (Connection pg = DriverManager.getConnection("jdbc:postgresql://" + host + ":" + port + "/postgres", props);
          var st = pg.createStatement()) {
        st.execute("INSERT INTO pgbench_accounts SELECT a, 1, 0, 'probe' FROM generate_series(" + (accounts + 1) + ", "
            + (accounts + 100) + ") a"); // the probes' rows: outside pgbench's range
      }
      Path warehouse = dir.resolve("wh");
      try (Database db = Floe.open(warehouse)) {
        MutationBench.exec(db, "CREATE TABLE pgbench_accounts (aid int PRIMARY KEY, bid int, abalance int, "
            + "filler char(84))");
      }
      Path log = dir.resolve("follower.log");
      List<String> command = new ArrayList<>(List.of("bin/floe", "cdc", "follow", "-w", warehouse.toString(),
          "--postgres", host + ":" + port + "/postgres", "--user", "floe", "--table", "pgbench_accounts", "--window-ms",
          Long.toString(windowMs)));
      if (batch != null) {
        command.addAll(List.of("--batch", batch.toString()));
      }
      ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
      pb.environment().remove("PGPASSWORD");
      follower = pb.start();
      long t0 = System.nanoTime();
      try (Database ro = Floe.openReadOnly(warehouse)) {
        // the snapshot: every row there
        while (count(ro) < accounts + 100) {
          if (!follower.isAlive()) {
            throw new IllegalStateException("the follower stopped: " + Files.readString(log));
          }
          if (System.nanoTime() - t0 > 600_000_000_000L) {
            throw new IllegalStateException("the snapshot did not arrive in 10 minutes: " + Files.readString(log));
          }
          Thread.sleep(500);
        }
        double snapshotSeconds = (System.nanoTime() - t0) / 1e9;
        System.err.printf(Locale.ROOT, "snapshot of %,d rows in Floe after %.1f s%n", accounts + 100, snapshotSeconds);
        // its batch lines: the table's snapshot count would not do, the follower's maintainer expires old ones
        long commitsBefore = committedBatches(log);
        Process load = new ProcessBuilder(PgWireBench.Postgres.tool("pgbench"), "-n", "-N", "-c", "2", "-j", "2", "-R",
            Integer.toString(tps), "-T", Integer.toString(seconds), "-h", host, "-p", Integer.toString(port), "-U", "floe",
            "postgres").redirectErrorStream(true).redirectOutput(dir.resolve("pgbench.log").toFile()).start();
        List<Double> lags = new ArrayList<>();
        Map<Integer, long[]> pending = new HashMap<>(); // aid -> {sequence, committed at}
        long start = System.nanoTime();
        long end = start + seconds * 1_000_000_000L;
        long nextProbe = start;
        int sequence = 0;
        int lost = 0;
        try (Connection pg = DriverManager.getConnection("jdbc:postgresql://" + host + ":" + port + "/postgres", props);
            PreparedStatement probe = pg.prepareStatement("UPDATE pgbench_accounts SET filler = ? WHERE aid = ?")) {
          while (System.nanoTime() < end || !pending.isEmpty() && System.nanoTime() < end + 30_000_000_000L) {
            long now = System.nanoTime();
            if (now >= nextProbe && now < end) {
              int aid = (int) (accounts + 1 + sequence % 100);
              if (pending.containsKey(aid)) {
                lost++; // not seen before its row was probed again
              }
              probe.setString(1, "p" + sequence);
              probe.setInt(2, aid);
              probe.executeUpdate(); // autocommit: returns once committed
              pending.put(aid, new long[] {sequence, System.nanoTime()});
              sequence++;
              nextProbe += probeMs * 1_000_000L;
            }
            try (Result r = ro.sql("SELECT aid, filler FROM pgbench_accounts WHERE aid > " + accounts)) {
              long seen = System.nanoTime();
              for (Row row : r) {
                long[] p = pending.get((int) row.getLong(0));
                if (p != null && row.getString(1).strip().equals("p" + p[0])) {
                  lags.add((seen - p[1]) / 1e6);
                  pending.remove((int) row.getLong(0));
                }
              }
            }
            Thread.sleep(20);
          }
        }
        load.waitFor();
        double minutes = (System.nanoTime() - start) / 60e9;
        long commits = committedBatches(log) - commitsBefore;
        String pgbench = Files.readString(dir.resolve("pgbench.log"));
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("tps = ([0-9.]+) \\(without").matcher(pgbench);
        String achieved = m.find() ? m.group(1) : "?";
        lags.sort(null);
        double p50 = lags.isEmpty() ? Double.NaN : lags.get(lags.size() / 2);
        double p99 = lags.isEmpty() ? Double.NaN : lags.get(Math.min(lags.size() - 1, (int) (lags.size() * 0.99)));
        System.err.printf(Locale.ROOT, "lag p50 %.0f ms, p99 %.0f ms over %d probes (%d lost); pgbench %s tps; "
            + "%.0f commits/min%n", p50, p99, lags.size(), lost + pending.size(), achieved, commits / minutes);
        StringBuilder md = new StringBuilder();
        md.append("## A PostgreSQL table followed into Floe (floe cdc follow): end-to-end lag — ").append(LocalDate.now())
            .append("\n\n");
        md.append("- Command: `bench/run cdc-lag").append(args.length > 0 ? " " + String.join(" ", args) : "")
            .append("`\n");
        md.append("- Machine: ").append(QueryBench.machine()).append("; PostgreSQL ")
            .append(PgWireBench.Postgres.version()).append(" (Debian package, `wal_level=logical`) on the same "
                + "machine\n");
        md.append(String.format(Locale.ROOT, "- `pgbench -N -c 2 -R %d` (simple update: `pgbench_accounts`, then "
            + "history) for %d s on a scale-%d database; `bin/floe cdc follow --window-ms %d%s` (its own process) folds "
            + "`pgbench_accounts` into Floe; a probe updates one of 100 rows pgbench never touches every %d ms, and a "
            + "read-only Floe beside the follower polls them every 20 ms. Lag: the probe's COMMIT returning → its "
            + "value visible in Floe. The snapshot of %,d rows took %.1f s.%n%n", tps, seconds, scale, windowMs,
            batch == null ? "" : " --batch " + batch, probeMs, accounts + 100, snapshotSeconds));
        md.append("| measure | Floe |\n|---|---:|\n");
        md.append(String.format(Locale.ROOT, "| PostgreSQL COMMIT → visible in Floe, p50 / p99 (%d probes, %d not "
            + "seen before the next probe of their row) | %.0f / %.0f ms |%n", lags.size(), lost + pending.size(), p50,
            p99));
        md.append(String.format(Locale.ROOT, "| pgbench's rate achieved meanwhile | %s tps |%n", achieved));
        md.append(String.format(Locale.ROOT, "| the follower's commits per minute | %.0f |%n%n", commits / minutes));
        QueryBench.appendResults(out, md);
      }
    } finally {
      if (follower != null) {
        follower.destroy();
        follower.waitFor(30, java.util.concurrent.TimeUnit.SECONDS);
        follower.destroyForcibly();
      }
      try {
        PgWireBench.Postgres.run(List.of(PgWireBench.Postgres.tool("pg_ctl"), "-D", cluster.toString(), "-m",
            "immediate", "-w", "stop"), true);
      } catch (IOException | IllegalStateException e) {
        System.err.println("could not stop PostgreSQL: " + e.getMessage());
      }
    }
  }

  private static long count(Database ro) {
    try (Result r = ro.sql("SELECT count(*) FROM pgbench_accounts")) {
      return r.iterator().next().getLong(0);
    }
  }

  /** The batches the follower printed as committed so far (each line of one, "(nothing new)" ones apart). */
  private static long committedBatches(Path log) throws java.io.IOException {
    try (java.util.stream.Stream<String> lines = Files.lines(log)) {
      return lines.filter(l -> l.contains(" event(s) through lsn:") && !l.endsWith("(nothing new)")).count();
    }
  }
}
