package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code floe tail repair}: a damaged log reported, then repaired with the flag; the table works again. */
class TailCommandTest {
  @TempDir
  Path dir;

  @Test
  void reportsDamageAndDropsFromItOnlyWithTheFlag() throws IOException {
    String wh = dir.resolve("wh").toString();
    StringBuilder load = new StringBuilder("CREATE TABLE ev (k integer, v text) WITH (tail = true);");
    for (int i = 0; i < 6; i++) { // six records of 50 rows
      load.append("INSERT INTO ev SELECT i, 'row ' || i FROM generate_series(").append(i * 50).append(", ")
          .append(i * 50 + 49).append(") t(i);");
    }
    assertThat(Cli.run("sql", "-w", wh, "-c", load.toString()).status()).isZero();
    Path segment;
    try (var files = Files.walk(dir.resolve("wh").resolve(".floe").resolve("tail"))) {
      segment = files.filter(p -> p.toString().endsWith(".wal")).findFirst().orElseThrow();
    }
    byte[] bytes = Files.readAllBytes(segment);
    ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    int third = 0;
    for (int r = 0; r < 2; r++) {
      third += 24 + b.getInt(third);
    }
    bytes[third + 40] ^= 0x40; // inside the third record, which the log acknowledged
    Files.write(segment, bytes);
    String damage = "log segment " + segment + " is damaged at byte " + third + ": checksum mismatch";

    Cli.Outcome refused = Cli.run("sql", "-w", wh, "-c", "SELECT count(*) FROM ev");
    assertThat(refused.status()).isEqualTo(Main.EXIT_ERROR);
    assertThat(refused.err()).startsWith("ERROR XX001: " + damage);

    Cli.Outcome report = Cli.run("tail", "repair", "ev", "-w", wh);
    assertThat(report.status()).as(report.err()).isEqualTo(Main.EXIT_ERROR);
    assertThat(report.out()).startsWith("the log of table \"ev\" is damaged: " + damage)
        .contains("--drop-from-damage would drop 4 records and " + (bytes.length - third)
            + " bytes, from offset 100 on (150 rows in the records that could be read); the next row would get offset ");
    assertThat(Files.readAllBytes(segment)).isEqualTo(bytes);

    Cli.Outcome repaired = Cli.run("tail", "repair", "ev", "--drop-from-damage", "-w", wh);
    assertThat(repaired.status()).as(repaired.err()).isZero();
    List<String> lines = repaired.out().lines().toList();
    assertThat(lines.get(0)).startsWith("the log of table \"ev\" was damaged: " + damage);
    assertThat(lines.get(1)).isEqualTo("dropped 4 records and " + (bytes.length - third)
        + " bytes, from offset 100 on (150 rows in the records that could be read)");
    assertThat(lines.get(2)).startsWith("kept aside: " + segment + ".damaged-");
    assertThat(lines.get(3)).startsWith("the next row gets offset ").endsWith("up to it is handed out again");
    long next = Long.parseLong(lines.get(3).split(" ")[5].replace(";", ""));
    assertThat(next).isGreaterThanOrEqualTo(300);
    assertThat(Files.readAllBytes(Path.of(lines.get(2).substring("kept aside: ".length())))).isEqualTo(bytes);

    Cli.Outcome rows = Cli.run("sql", "-w", wh, "--format", "csv", "-c",
        "SELECT count(*) AS n, max(_offset) AS last FROM ev");
    assertThat(rows.err()).isEmpty();
    assertThat(rows.out()).isEqualTo("n,last\n100,99\n");
    Cli.Outcome appended = Cli.run("sql", "-w", wh, "--format", "csv", "-c",
        "INSERT INTO ev VALUES (1000, 'after') RETURNING _offset");
    assertThat(appended.err()).isEmpty();
    assertThat(appended.out()).isEqualTo("_offset\n" + next + "\n");

    Cli.Outcome sound = Cli.run("tail", "repair", "ev", "-w", wh);
    assertThat(sound.status()).isZero();
    assertThat(sound.out()).isEqualTo("the log of table \"ev\" is sound; the next row gets offset " + (next + 1) + "\n");
  }

  @Test
  void refusesWhatIsNotALogsTable() {
    String wh = dir.resolve("wh").toString();
    assertThat(Cli.run("tail", "repair", "ev", "-w", wh).err())
        .isEqualTo("ERROR 3D000: no warehouse in " + dir.resolve("wh") + "\n");
    assertThat(Cli.run("sql", "-w", wh, "-c", "CREATE TABLE plain (k integer)").status()).isZero();
    Cli.Outcome plain = Cli.run("tail", "repair", "plain", "-w", wh);
    assertThat(plain.status()).isEqualTo(Main.EXIT_ERROR);
    assertThat(plain.err()).startsWith("ERROR 55000: table \"plain\" has no tail");
    assertThat(Cli.run("tail", "repair", "nope", "-w", wh).err()).startsWith("ERROR 42P01: ");
    assertThat(Cli.run("tail", "-w", wh).status()).isEqualTo(Main.EXIT_USAGE);
  }
}
