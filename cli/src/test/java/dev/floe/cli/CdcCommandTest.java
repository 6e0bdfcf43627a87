package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code floe cdc apply}: a directory of Debezium event files and LWW envelopes on standard input,
 * committed in batches; run again it resumes after the last committed batch and changes nothing; a bad
 * envelope names its file and line, and the batches before it stay.
 */
class CdcCommandTest {
  @TempDir
  Path dir;

  static String event(String op, long lsn, String before, String after) {
    return "{\"op\": \"" + op + "\", \"before\": " + before + ", \"after\": " + after + ", \"source\": {\"lsn\": "
        + lsn + "}}";
  }

  @Test
  void appliesADirectoryInBatchesAndResumesAfterTheLastCommit() throws IOException {
    String wh = dir.resolve("wh").toString();
    assertThat(Cli.run("sql", "-w", wh, "-c", "CREATE TABLE c (id int PRIMARY KEY, name text)").status()).isZero();
    Path events = Files.createDirectory(dir.resolve("events"));
    List<String> first = new ArrayList<>();
    for (int i = 1; i <= 10; i++) {
      first.add(event("c", i, null, "{\"id\": " + i + ", \"name\": \"n" + i + "\"}"));
    }
    Files.write(events.resolve("0001.json"), first);
    Files.write(events.resolve("0002.json"), List.of(event("u", 20, "{\"id\": 1}", "{\"id\": 1, \"name\": \"one\"}"),
        "", event("d", 21, "{\"id\": 2}", null), "null"));
    Cli.Outcome applied = Cli.run("cdc", "apply", "-w", wh, "--table", "c", "--format", "debezium", "--batch", "4",
        events.toString());
    assertThat(applied.status()).as(applied.err()).isZero();
    // batches run across files; the last one (a tombstone) changes nothing, so it commits nothing
    assertThat(applied.out().lines().toList()).containsExactly(
        "4 envelope(s) through 0001.json:4: 4 key(s) changed, 4 row(s) written, 0 deleted",
        "4 envelope(s) through 0001.json:8: 4 key(s) changed, 4 row(s) written, 0 deleted",
        "4 envelope(s) through 0002.json:3: 4 key(s) changed, 3 row(s) written, 2 deleted",
        "1 envelope(s) through 0002.json:4: 0 key(s) changed, 0 row(s) written, 0 deleted (nothing new)",
        "applied 13 envelope(s) to c");
    Cli.Outcome rows = Cli.run("sql", "-w", wh, "--format", "csv", "-c", "SELECT id, name FROM c ORDER BY id");
    assertThat(rows.out().lines().toList()).containsExactly("id,name", "1,one", "3,n3", "4,n4", "5,n5", "6,n6",
        "7,n7", "8,n8", "9,n9", "10,n10");

    // run again: it starts after the last committed batch, and a new file is applied
    Files.write(events.resolve("0003.json"), List.of(event("c", 30, null, "{\"id\": 2, \"name\": \"two\"}")));
    Cli.Outcome again = Cli.run("cdc", "apply", "-w", wh, "--table", "c", "--format", "debezium", events.toString());
    assertThat(again.status()).as(again.err()).isZero();
    assertThat(again.out()).startsWith("resuming after 0002.json:3").contains("applied 2 envelope(s) to c");
    assertThat(Cli.run("sql", "-w", wh, "-c", "SELECT name FROM c WHERE id = 2").out()).contains("two");
  }

  @Test
  void lwwFromStandardInputAndABadEnvelopeNamesItsLine() {
    String wh = dir.resolve("wh").toString();
    assertThat(Cli.run("sql", "-w", wh, "-c", "CREATE TABLE u (id int PRIMARY KEY, v int)").status()).isZero();
    String input = "{\"key\": {\"id\": 1}, \"ts\": 5, \"cells\": {\"v\": 1}}\n"
        + "{\"key\": {\"id\": 1}, \"ts\": 4, \"cells\": {\"v\": 0}}\n"
        + "{\"key\": {\"id\": 2}, \"ts\": 4, \"cells\": {\"v\": 2}}\n"
        + "{\"key\": {\"id\": 3}, \"ts\": 4, \"cells\": {\"v\": \"three\"}}\n";
    Cli.Outcome out = Cli.runWithInput(input, "cdc", "apply", "-w", wh, "--table", "u", "--format", "lww", "--batch",
        "2");
    assertThat(out.status()).isEqualTo(Main.EXIT_ERROR);
    assertThat(out.err()).startsWith("ERROR 22P02: invalid input syntax for type integer: \"three\" (-:4)");
    assertThat(Cli.run("sql", "-w", wh, "--format", "csv", "-c", "SELECT id, v FROM u ORDER BY id").out().lines()
        .toList()).containsExactly("id,v", "1,1"); // the first batch committed; the bad one (lines 3-4) did not

    assertThat(Cli.run("cdc", "apply", "-w", wh, "--table", "u", "--format", "xml").status())
        .isEqualTo(Main.EXIT_USAGE);
    assertThat(Cli.run("cdc", "apply", "-w", wh, "--format", "lww").status()).isEqualTo(Main.EXIT_USAGE);
    Cli.Outcome missing = Cli.run("cdc", "apply", "-w", wh, "--table", "nope", "--format", "lww", "-");
    assertThat(missing.status()).isEqualTo(Main.EXIT_ERROR);
    assertThat(missing.err()).startsWith("ERROR 42P01");
    Cli.Outcome noFile = Cli.run("cdc", "apply", "-w", wh, "--table", "u", "--format", "lww",
        dir.resolve("absent.json").toString());
    assertThat(noFile.status()).isEqualTo(Main.EXIT_ERROR);
    assertThat(noFile.err()).contains("could not open file");
  }

  /**
   * A follow keeps the warehouse for long, so it maintains the tables it writes as floe serve does: a
   * stream committed every few envelopes has its small files compacted as it goes (with --maintain-ms 0,
   * one file a commit stays).
   */
  @Test
  void aFollowingApplyMaintainsTheTablesItWrites() throws Exception {
    String maintained = dir.resolve("maintained").toString();
    String plain = dir.resolve("plain").toString();
    for (String wh : List.of(maintained, plain)) {
      assertThat(Cli.run("sql", "-w", wh, "-c", "CREATE TABLE s (id int PRIMARY KEY, v int)").status()).isZero();
      java.io.PipedOutputStream feed = new java.io.PipedOutputStream();
      java.io.PipedInputStream stdin = new java.io.PipedInputStream(feed);
      Thread producer = new Thread(() -> {
        try (feed) {
          for (int n = 1; n <= 80; n++) {
            feed.write(("{\"key\": {\"id\": " + n + "}, \"ts\": " + n + ", \"cells\": {\"v\": " + n + "}}\n")
                .getBytes(java.nio.charset.StandardCharsets.UTF_8));
            feed.flush();
            Thread.sleep(60);
          }
        } catch (IOException | InterruptedException e) {
          throw new IllegalStateException(e);
        }
      });
      producer.start();
      java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
      java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
      Environment env = new Environment(stdin, new java.io.PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8),
          new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8), java.util.Map.of(), false, false);
      int status = Main.run(env, "cdc", "apply", "-w", wh, "--table", "s", "--format", "lww", "--follow",
          "--window-ms", "20", "--maintain-ms", wh.equals(maintained) ? "100" : "0", "-");
      producer.join();
      assertThat(status).as(err.toString(java.nio.charset.StandardCharsets.UTF_8)).isZero();
      assertThat(out.toString(java.nio.charset.StandardCharsets.UTF_8)).endsWith("applied 80 envelope(s) to s\n");
      assertThat(Cli.run("sql", "-w", wh, "--format", "csv", "-c", "SELECT count(*), sum(v) FROM s").out())
          .isEqualTo("count,sum\n80,3240\n");
    }
    assertThat(count(plain, "SELECT count(*) FROM \"s$files\"")).as("a commit a window, each its own file")
        .isGreaterThanOrEqualTo(16);
    assertThat(count(plain, "SELECT count(*) FROM \"s$snapshots\" WHERE operation = 'replace'")).isZero();
    assertThat(count(maintained, "SELECT count(*) FROM \"s$snapshots\" WHERE operation = 'replace'"))
        .as("compactions as it went").isPositive();
  }

  private static long count(String wh, String sql) {
    String count = Cli.run("sql", "-w", wh, "--format", "csv", "-c", sql).out();
    return Long.parseLong(count.lines().skip(1).findFirst().orElseThrow());
  }
}
