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

  /**
   * A position names a file and a line, and the input must hold it with the same lines before it: another
   * directory with the same file names, or a file rewritten under its name, is read from its start (what was
   * applied before changes nothing), never skipped by name.
   */
  @Test
  void anInputThatIsNotTheOneThePositionWasReadFromIsReadWhole() throws IOException {
    String wh = dir.resolve("wh").toString();
    assertThat(Cli.run("sql", "-w", wh, "-c", "CREATE TABLE c (id int PRIMARY KEY, name text)").status()).isZero();
    Path day1 = Files.createDirectory(dir.resolve("day1"));
    Path day2 = Files.createDirectory(dir.resolve("day2"));
    for (Path day : List.of(day1, day2)) {
      int base = day.equals(day1) ? 0 : 100;
      for (int f = 0; f < 2; f++) {
        List<String> lines = new ArrayList<>();
        for (int i = 1; i <= 2; i++) {
          int id = base + f * 2 + i;
          lines.add(event("c", id, null, "{\"id\": " + id + ", \"name\": \"n" + id + "\"}"));
        }
        Files.write(day.resolve("part-" + f + ".json"), lines);
      }
    }
    assertThat(Cli.run("cdc", "apply", "-w", wh, "--table", "c", "--format", "debezium", day1.toString()).status())
        .isZero();
    Cli.Outcome second = Cli.run("cdc", "apply", "-w", wh, "--table", "c", "--format", "debezium", day2.toString());
    assertThat(second.status()).as(second.err()).isZero();
    assertThat(second.out()).startsWith("the input is not the one the table's position part-1.json:2 was read from: "
        + "reading all of it").contains("applied 4 envelope(s) to c");
    assertThat(Cli.run("sql", "-w", wh, "--format", "csv", "-c", "SELECT count(*) FROM c").out()).contains("\n8");

    // the same input again resumes after its position; a file rewritten under its name is read again
    Cli.Outcome same = Cli.run("cdc", "apply", "-w", wh, "--table", "c", "--format", "debezium", day2.toString());
    assertThat(same.out()).startsWith("resuming after part-1.json:2").contains("applied 0 envelope(s) to c");
    Files.write(day2.resolve("part-1.json"), List.of(event("c", 200, null, "{\"id\": 200, \"name\": \"x\"}"),
        event("c", 201, null, "{\"id\": 201, \"name\": \"y\"}"), event("c", 202, null, "{\"id\": 202, \"name\": "
        + "\"z\"}")));
    Cli.Outcome rewritten = Cli.run("cdc", "apply", "-w", wh, "--table", "c", "--format", "debezium", day2.toString());
    assertThat(rewritten.out()).startsWith("the input is not the one").contains("applied 5 envelope(s) to c");
    assertThat(Cli.run("sql", "-w", wh, "--format", "csv", "-c", "SELECT count(*) FROM c").out()).contains("\n11");
  }

  /**
   * The background maintainer runs beside the command (as in {@code floe serve}): a stream of small
   * commits leaves the table compacted, not a file per batch; {@code --maintain-ms 0} turns it off.
   */
  @Test
  void theMaintainerCompactsTheTableWhileTheCommandApplies() throws IOException {
    String wh = dir.resolve("wh").toString();
    assertThat(Cli.run("sql", "-w", wh, "-c", "CREATE TABLE c (id int PRIMARY KEY, name text) WITH "
        + "('floe.maintenance.min-files' = '4'); CREATE TABLE off (id int PRIMARY KEY, name text)").status()).isZero();
    List<String> lines = new ArrayList<>();
    for (int i = 1; i <= 240; i++) {
      lines.add(event("c", i, null, "{\"id\": " + i + ", \"name\": \"n" + i + "\"}"));
    }
    Path events = Files.write(dir.resolve("events.json"), lines);
    Cli.Outcome applied = Cli.run("cdc", "apply", "-w", wh, "--table", "c", "--format", "debezium", "--batch", "4",
        "--maintain-ms", "100", events.toString());
    assertThat(applied.status()).as(applied.err()).isZero();
    Cli.Outcome health = Cli.run("sql", "-w", wh, "--format", "csv", "-c",
        "SELECT data_files FROM \"c$health\"");
    assertThat(Integer.parseInt(last(health))).as("60 batches, compacted").isLessThan(30);
    assertThat(last(Cli.run("sql", "-w", wh, "--format", "csv", "-c", "SELECT count(*), sum(id) FROM c")))
        .isEqualTo("240,28920");

    Cli.Outcome off = Cli.run("cdc", "apply", "-w", wh, "--table", "off", "--format", "debezium", "--batch", "40",
        "--maintain-ms", "0", events.toString());
    assertThat(off.status()).as(off.err()).isZero();
    assertThat(last(Cli.run("sql", "-w", wh, "--format", "csv", "-c", "SELECT data_files FROM \"off$health\"")))
        .isEqualTo("6");
    Cli.Outcome wrong = Cli.run("cdc", "apply", "-w", wh, "--table", "off", "--format", "debezium",
        "--maintain-ms", "-5", events.toString());
    assertThat(wrong.status()).isEqualTo(Main.EXIT_USAGE);
    assertThat(wrong.err()).contains("--maintain-ms must be 0 or more");
  }

  private static String last(Cli.Outcome o) {
    List<String> lines = o.out().lines().toList();
    return lines.get(lines.size() - 1);
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
    // a row the batch folds to that the table refuses: the batch's lines, and the key in the detail
    assertThat(Cli.run("sql", "-w", wh, "-c", "CREATE TABLE nn (id int PRIMARY KEY, v int NOT NULL, w int)").status())
        .isZero();
    Cli.Outcome notNull = Cli.runWithInput("{\"key\": {\"id\": 1}, \"ts\": 5, \"cells\": {\"v\": 1}}\n"
        + "{\"key\": {\"id\": 2}, \"ts\": 5, \"cells\": {\"w\": 1}}\n", "cdc", "apply", "-w", wh, "--table", "nn",
        "--format", "lww");
    assertThat(notNull.status()).isEqualTo(Main.EXIT_ERROR);
    assertThat(notNull.err()).startsWith("ERROR 23502: null value in column \"v\" of relation \"nn\" violates not-null "
        + "constraint (the batch of -:1 to -:2)").contains("[2]");

    assertThat(Cli.run("cdc", "apply", "-w", wh, "--table", "u", "--format", "xml").status())
        .isEqualTo(Main.EXIT_USAGE);
    assertThat(Cli.run("cdc", "apply", "-w", wh, "--format", "lww").status()).isEqualTo(Main.EXIT_USAGE);
    Cli.Outcome missing = Cli.run("cdc", "apply", "-w", wh, "--table", "nope", "--format", "lww", "-");
    assertThat(missing.status()).isEqualTo(Main.EXIT_ERROR);
    assertThat(missing.err()).startsWith("ERROR 42P01");
    Cli.Outcome noFile = Cli.run("cdc", "apply", "-w", wh, "--table", "u", "--format", "lww",
        dir.resolve("absent.json").toString());
    assertThat(noFile.status()).isEqualTo(Main.EXIT_ERROR);
    assertThat(noFile.err()).isEqualTo("ERROR 58P01: could not open file \"" + dir.resolve("absent.json")
        + "\": No such file or directory\n");
  }

  /**
   * SIGTERM (or Ctrl-C) while envelopes from standard input wait for their window: they are committed
   * before the process ends, as standard input cannot be read again, and the stop is a success (exit 0).
   */
  @Test
  void aStopCommitsWhatWasReadFromStandardInput() throws Exception {
    String wh = dir.resolve("wh").toString();
    assertThat(Cli.run("sql", "-w", wh, "-c", "CREATE TABLE s (id int PRIMARY KEY, name text)").status()).isZero();
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(javaBin, "--add-opens=java.base/java.nio=ALL-UNNAMED", "-Xmx512m",
        "-XX:TieredStopAtLevel=1", "-Djava.io.tmpdir=" + dir, "-cp", System.getProperty("java.class.path"),
        Main.class.getName(), "cdc", "apply", "-w", wh, "--table", "s", "--format", "debezium", "--follow",
        "--window-ms", "600000", "-").redirectErrorStream(true).redirectOutput(dir.resolve("out").toFile()).start();
    try (java.io.Writer in = new java.io.OutputStreamWriter(p.getOutputStream(), java.nio.charset.StandardCharsets.UTF_8)) {
      for (int i = 1; i <= 3; i++) {
        in.write(event("c", i, null, "{\"id\": " + i + ", \"name\": \"n" + i + "\"}") + "\n");
      }
      in.flush();
      Thread.sleep(8_000); // the JVM started and read them; its window is ten minutes away
      p.destroy(); // SIGTERM, standard input still open
      assertThat(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    }
    String printed = Files.readString(dir.resolve("out"));
    assertThat(p.exitValue()).as(printed).isZero();
    assertThat(printed).endsWith("3 envelope(s) through -:3: 3 key(s) changed, 3 row(s) written, 0 deleted\n"
        + "applied 3 envelope(s) to s\n");
    Cli.Outcome rows = Cli.run("sql", "-w", wh, "-c", "SELECT id, name FROM s ORDER BY id", "--format", "csv");
    assertThat(rows.out()).isEqualTo("id,name\n1,n1\n2,n2\n3,n3\n");
  }
}
