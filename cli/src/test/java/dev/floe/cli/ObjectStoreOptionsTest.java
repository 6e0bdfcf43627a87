package dev.floe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.testing.S3Server;
import dev.floe.testing.S3ServerExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --warehouse-location s3://...} and the {@code --s3-*} options (or their {@code FLOE_} variables): a
 * warehouse whose tables are on a real S3-compatible server (s3proxy, started here), and the mistakes refused.
 */
class ObjectStoreOptionsTest {
  @RegisterExtension
  static final S3ServerExtension S3 = new S3ServerExtension();
  @TempDir
  Path dir;

  @Test
  void floeSqlKeepsTheTablesFilesOnS3ByOptionsOrEnvironment() throws IOException {
    String w = dir.resolve("w").toString();
    Cli.Outcome created = Cli.run("sql", "-w", w, "--warehouse-location", "s3://floe/cli", "--s3-endpoint",
        S3.server().endpoint(), "-c", "CREATE TABLE t (id int, v text); INSERT INTO t VALUES (1, 'a'), (2, 'b'); "
            + "UPDATE t SET v = 'B' WHERE id = 2");
    assertThat(created.status()).as(created.err()).isZero();
    assertThat(Files.isDirectory(S3.server().objects("cli/public"))).isTrue();
    try (Stream<Path> files = Files.walk(dir)) {
      assertThat(files.filter(p -> p.toString().endsWith(".parquet")).filter(p -> !p.toString().contains("/.floe/")))
          .isEmpty();
    }
    Cli.Outcome read = Cli.run("", Map.of("FLOE_WAREHOUSE_LOCATION", "s3://floe/cli", "FLOE_S3_ENDPOINT",
        S3.server().endpoint()), false, "sql", "-w", w, "--format", "csv", "-c", "SELECT id, v FROM t ORDER BY id");
    assertThat(read.status()).as(read.err()).isZero();
    assertThat(read.out()).contains("1,a").contains("2,B");
  }

  @Test
  void mistakesAreRefusedBeforeAnythingOpens() {
    String w = dir.resolve("w2").toString();
    for (List<String> wrong : List.of(
        List.of("--warehouse-location", "/some/dir"),
        List.of("--warehouse-location", "s3://"),
        List.of("--warehouse-location", "s3://bucket//x"),
        List.of("--s3-endpoint", "http://127.0.0.1:1"),
        List.of("--warehouse-location", "s3://b/p", "--s3-endpoint", "not a url"),
        List.of("--warehouse-location", "s3://b/p", "--s3-path-style", "maybe"),
        List.of("--warehouse-location", "s3://b/p", "--s3-cache-size", "lots"),
        List.of("--s3-cache-size", "1GB"))) {
      String[] args = Stream.concat(Stream.of("sql", "-w", w), Stream.concat(wrong.stream(),
          Stream.of("-c", "SELECT 1"))).toArray(String[]::new);
      Cli.Outcome r = Cli.run(args);
      assertThat(r.status()).as(wrong + ": " + r.err()).isEqualTo(2);
      assertThat(r.err()).as(wrong.toString()).containsAnyOf("--warehouse-location", "--s3-");
    }
    assertThat(dir.resolve("w2")).doesNotExist();
  }
}
