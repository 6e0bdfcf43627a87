package dev.floe.server.pg;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The bank test, in the Jepsen style, through pgjdbc: 20 accounts in two tables, 8 clients moving money
 * between random accounts (often across the two tables) in transaction blocks, retrying on 40001, while
 * readers sum every balance, in one statement and in two statements of one block. Snapshot isolation and
 * atomic commit mean every sum is the same, and the only error a client may see is 40001.
 */
class BankTest {
  @TempDir
  Path dir;

  private static final int ACCOUNTS = 20;
  private static final int START = 100;
  private static final long RUN_MILLIS = Long.getLong("floe.bank.millis", 6_000);

  @ParameterizedTest
  @ValueSource(strings = {"merge-on-read, format 3", "copy-on-write, format 2"})
  void totalsNeverChange(String strategy) throws Exception {
    String props = strategy.startsWith("merge") ? "WITH (format_version = 3)"
        : "WITH (format_version = 2, 'write.update.mode' = 'copy-on-write', 'write.delete.mode' = 'copy-on-write')";
    try (PgTestServer floe = new PgTestServer(dir.resolve("wh"))) {
      try (Connection c = floe.connect(); Statement st = c.createStatement()) {
        for (String t : List.of("bank_a", "bank_b")) {
          st.execute("CREATE TABLE " + t + " (id int NOT NULL, balance int NOT NULL) " + props);
        }
        st.execute("INSERT INTO bank_a SELECT i, " + START + " FROM range(0, 10) r(i)");
        st.execute("INSERT INTO bank_b SELECT i, " + START + " FROM range(10, 20) r(i)");
      }
      long total = (long) ACCOUNTS * START;
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RUN_MILLIS);
      AtomicLong transfers = new AtomicLong();
      AtomicLong aborts = new AtomicLong();
      AtomicLong reads = new AtomicLong();
      Map<String, String> unexpected = new ConcurrentHashMap<>();
      List<Long> wrongTotals = java.util.Collections.synchronizedList(new ArrayList<>());
      ExecutorService pool = Executors.newFixedThreadPool(10);
      List<Future<?>> clients = new ArrayList<>();
      for (int k = 0; k < 8; k++) {
        long seed = 1000L + k;
        clients.add(pool.submit(() -> {
          Random random = new Random(seed);
          try (Connection c = floe.connect()) {
            c.setAutoCommit(false);
            while (System.nanoTime() < deadline) {
              int from = random.nextInt(ACCOUNTS);
              int to = (from + 1 + random.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
              int amount = 1 + random.nextInt(20);
              try {
                int balance = balance(c, from);
                balance(c, to);
                if (balance < amount) {
                  c.rollback();
                  continue;
                }
                move(c, from, -amount);
                move(c, to, amount);
                c.commit();
                transfers.incrementAndGet();
              } catch (SQLException e) {
                if ("40001".equals(e.getSQLState())) {
                  aborts.incrementAndGet();
                } else {
                  unexpected.put(e.getSQLState() + " " + e.getMessage(), "transfer");
                }
                c.rollback();
              }
            }
          }
          return null;
        }));
      }
      for (int k = 0; k < 2; k++) {
        boolean twoStatements = k == 1;
        clients.add(pool.submit(() -> {
          try (Connection c = floe.connect()) {
            c.setAutoCommit(false);
            while (System.nanoTime() < deadline) {
              try (Statement st = c.createStatement()) {
                long sum;
                if (twoStatements) {
                  sum = single(st, "SELECT sum(balance) FROM bank_a") + single(st, "SELECT sum(balance) FROM bank_b");
                } else {
                  sum = single(st, "SELECT (SELECT sum(balance) FROM bank_a) + (SELECT sum(balance) FROM bank_b)");
                }
                c.commit(); // read-only: never conflicts
                reads.incrementAndGet();
                if (sum != total) {
                  wrongTotals.add(sum);
                }
              } catch (SQLException e) {
                unexpected.put(e.getSQLState() + " " + e.getMessage(), "read");
                c.rollback();
              }
            }
          }
          return null;
        }));
      }
      for (Future<?> f : clients) {
        f.get(RUN_MILLIS + 120_000, TimeUnit.MILLISECONDS);
      }
      pool.shutdown();
      try (Connection c = floe.connect(); Statement st = c.createStatement()) {
        long end = single(st, "SELECT (SELECT sum(balance) FROM bank_a) + (SELECT sum(balance) FROM bank_b)");
        long negative = single(st, "SELECT (SELECT count(*) FROM bank_a WHERE balance < 0) "
            + "+ (SELECT count(*) FROM bank_b WHERE balance < 0)");
        long rows = single(st, "SELECT (SELECT count(*) FROM bank_a) + (SELECT count(*) FROM bank_b)");
        System.err.printf("[BankTest] %s: %d transfers, %d aborted (40001), %d reads in %d ms%n", strategy,
            transfers.get(), aborts.get(), reads.get(), RUN_MILLIS);
        assertThat(unexpected).isEmpty();
        assertThat(wrongTotals).isEmpty();
        assertThat(end).isEqualTo(total);
        assertThat(rows).isEqualTo(ACCOUNTS);
        assertThat(negative).isZero();
        assertThat(transfers.get()).isPositive();
        assertThat(reads.get()).isPositive();
      }
    }
  }

  /**
   * Conflicts are per row: when no two clients ever touch the same account (client k moves money
   * between accounts 2k and 2k+1, all of them rows of the same one or two data files, merge-on-read),
   * no transfer aborts, however their commits interleave.
   */
  @org.junit.jupiter.api.Test
  void transfersBetweenDisjointAccountsNeverAbort() throws Exception {
    try (PgTestServer floe = new PgTestServer(dir.resolve("wh"))) {
      try (Connection c = floe.connect(); Statement st = c.createStatement()) {
        for (String t : List.of("bank_a", "bank_b")) {
          st.execute("CREATE TABLE " + t + " (id int NOT NULL, balance int NOT NULL) WITH (format_version = 3)");
        }
        st.execute("INSERT INTO bank_a SELECT i, " + START + " FROM range(0, 10) r(i)");
        st.execute("INSERT INTO bank_b SELECT i, " + START + " FROM range(10, 20) r(i)");
      }
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.min(RUN_MILLIS, 4_000));
      AtomicLong transfers = new AtomicLong();
      Map<String, String> errors = new ConcurrentHashMap<>();
      ExecutorService pool = Executors.newFixedThreadPool(8);
      List<Future<?>> clients = new ArrayList<>();
      for (int k = 0; k < 8; k++) {
        int mine = 2 * k;
        clients.add(pool.submit(() -> {
          Random random = new Random(mine);
          try (Connection c = floe.connect()) {
            c.setAutoCommit(false);
            while (System.nanoTime() < deadline) {
              boolean up = random.nextBoolean();
              int from = up ? mine : mine + 1;
              int to = up ? mine + 1 : mine;
              try {
                int balance = balance(c, from);
                balance(c, to);
                int amount = Math.min(balance, 1 + random.nextInt(20));
                move(c, from, -amount);
                move(c, to, amount);
                c.commit();
                transfers.incrementAndGet();
              } catch (SQLException e) {
                errors.put(e.getSQLState() + " " + e.getMessage(), "accounts " + mine + ", " + (mine + 1));
                c.rollback();
              }
            }
          }
          return null;
        }));
      }
      for (Future<?> f : clients) {
        f.get(RUN_MILLIS + 120_000, TimeUnit.MILLISECONDS);
      }
      pool.shutdown();
      System.err.printf("[BankTest] disjoint accounts: %d transfers%n", transfers.get());
      assertThat(errors).isEmpty();
      assertThat(transfers.get()).isGreaterThan(8);
      try (Connection c = floe.connect(); Statement st = c.createStatement()) {
        assertThat(single(st, "SELECT (SELECT sum(balance) FROM bank_a) + (SELECT sum(balance) FROM bank_b)"))
            .isEqualTo((long) ACCOUNTS * START);
        for (int k = 0; k < 8; k++) {
          assertThat(single(st, "SELECT sum(balance) FROM " + table(2 * k) + " WHERE id IN (" + 2 * k + ", "
              + (2 * k + 1) + ")")).as("accounts %d and %d", 2 * k, 2 * k + 1).isEqualTo(2L * START);
        }
      }
    }
  }

  /**
   * The bank on a keyed tail (one table, a primary key and a tail): transfers in pgjdbc transaction
   * blocks (autocommit off) are the block's own versions until COMMIT appends them as one log record,
   * which fails with 40001 only when another committed a change of one of its two accounts since the
   * block read it. Readers sum in one statement and in two statements of one block, while the log is
   * sealed again and again: every sum is the same, and 40001 is the only error.
   */
  @org.junit.jupiter.api.Test
  void keyedTailTransfersInBlocksKeepTheTotal() throws Exception {
    try (PgTestServer floe = new PgTestServer(dir.resolve("wh"))) {
      try (Connection c = floe.connect(); Statement st = c.createStatement()) {
        st.execute("CREATE TABLE bank_k (id int PRIMARY KEY, balance int NOT NULL) WITH (tail = true)");
        st.execute("INSERT INTO bank_k SELECT i, " + START + " FROM range(0, " + ACCOUNTS + ") r(i)");
      }
      long total = (long) ACCOUNTS * START;
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.min(RUN_MILLIS, 5_000));
      AtomicLong transfers = new AtomicLong();
      AtomicLong aborts = new AtomicLong();
      AtomicLong seals = new AtomicLong();
      Map<String, String> unexpected = new ConcurrentHashMap<>();
      List<Long> wrongTotals = java.util.Collections.synchronizedList(new ArrayList<>());
      ExecutorService pool = Executors.newFixedThreadPool(11);
      List<Future<?>> clients = new ArrayList<>();
      for (int k = 0; k < 8; k++) {
        long seed = 2000L + k;
        clients.add(pool.submit(() -> {
          Random random = new Random(seed);
          try (Connection c = floe.connect()) {
            c.setAutoCommit(false);
            while (System.nanoTime() < deadline) {
              int from = random.nextInt(ACCOUNTS);
              int to = (from + 1 + random.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
              int amount = 1 + random.nextInt(20);
              try {
                int balance = balance(c, "bank_k", from);
                if (balance < amount) {
                  c.rollback();
                  continue;
                }
                move(c, "bank_k", from, -amount);
                move(c, "bank_k", to, amount);
                assertThat(balance(c, "bank_k", from)).isEqualTo(balance - amount); // the block reads its own change
                c.commit();
                transfers.incrementAndGet();
              } catch (SQLException e) {
                if ("40001".equals(e.getSQLState())) {
                  aborts.incrementAndGet();
                } else {
                  unexpected.put(e.getSQLState() + " " + e.getMessage(), "transfer");
                }
                c.rollback();
              }
            }
          }
          return null;
        }));
      }
      for (int k = 0; k < 2; k++) {
        boolean twoStatements = k == 1;
        clients.add(pool.submit(() -> {
          try (Connection c = floe.connect()) {
            c.setAutoCommit(false);
            while (System.nanoTime() < deadline) {
              try (Statement st = c.createStatement()) {
                long sum = twoStatements
                    ? single(st, "SELECT sum(balance) FROM bank_k WHERE id < 10")
                        + single(st, "SELECT sum(balance) FROM bank_k WHERE id >= 10")
                    : single(st, "SELECT sum(balance) FROM bank_k");
                c.commit();
                if (sum != total) {
                  wrongTotals.add(sum);
                }
              } catch (SQLException e) {
                unexpected.put(e.getSQLState() + " " + e.getMessage(), "read");
                c.rollback();
              }
            }
          }
          return null;
        }));
      }
      clients.add(pool.submit(() -> {
        dev.floe.Log log = floe.db.openLog("bank_k");
        while (System.nanoTime() < deadline) {
          log.seal(true);
          seals.incrementAndGet();
          Thread.sleep(200);
        }
        return null;
      }));
      for (Future<?> f : clients) {
        f.get(RUN_MILLIS + 120_000, TimeUnit.MILLISECONDS);
      }
      pool.shutdown();
      System.err.printf("[BankTest] keyed tail: %d transfers, %d aborted (40001), %d seals%n", transfers.get(),
          aborts.get(), seals.get());
      assertThat(unexpected).isEmpty();
      assertThat(wrongTotals).isEmpty();
      assertThat(transfers.get()).isPositive();
      try (Connection c = floe.connect(); Statement st = c.createStatement()) {
        assertThat(single(st, "SELECT sum(balance) FROM bank_k")).isEqualTo(total);
        assertThat(single(st, "SELECT count(*) FROM bank_k WHERE balance < 0")).isZero();
        assertThat(single(st, "SELECT count(*) FROM bank_k")).isEqualTo(ACCOUNTS);
      }
      floe.db.openLog("bank_k").seal(true);
      try (Connection c = floe.connect(); Statement st = c.createStatement()) {
        assertThat(single(st, "SELECT sum(balance) FROM bank_k")).isEqualTo(total);
      }
    }
  }

  private static String table(int account) {
    return account < 10 ? "bank_a" : "bank_b";
  }

  private static int balance(Connection c, int account) throws SQLException {
    return balance(c, table(account), account);
  }

  private static int balance(Connection c, String table, int account) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT balance FROM " + table + " WHERE id = ?")) {
      ps.setInt(1, account);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getInt(1);
      }
    }
  }

  private static void move(Connection c, int account, int amount) throws SQLException {
    move(c, table(account), account, amount);
  }

  private static void move(Connection c, String table, int account, int amount) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET balance = balance + ? WHERE id = ?")) {
      ps.setInt(1, amount);
      ps.setInt(2, account);
      assertThat(ps.executeUpdate()).isEqualTo(1);
    }
  }

  private static long single(Statement st, String sql) throws SQLException {
    try (ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
