package dev.floe.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The server is a front end: it reaches the engine only through its public API, the {@code dev.floe}
 * package (docs/ARCHITECTURE.md). Every reference to an engine package below it ({@code dev.floe.sql},
 * {@code exec}, {@code tail}, {@code catalog}, {@code types}, ...), imported or written out in full, fails
 * this test, naming the file and line.
 */
class ImportRulesTest {
  /** {@code dev.floe.<package>.} where the package is not the server's own. */
  private static final Pattern BELOW_PUBLIC_API = Pattern.compile("\\bdev\\.floe\\.(?!server\\b)([a-z][a-z0-9_]*)\\.");

  @Test
  void serverUsesOnlyThePublicEngineApi() throws IOException {
    Path sources = Path.of("src/main/java");
    assertThat(sources).isDirectory();
    List<String> violations = new ArrayList<>();
    int files = 0;
    try (Stream<Path> walk = Files.walk(sources)) {
      for (Path file : walk.filter(p -> p.toString().endsWith(".java")).toList()) {
        files++;
        List<String> lines = Files.readAllLines(file);
        for (int k = 0; k < lines.size(); k++) {
          Matcher m = BELOW_PUBLIC_API.matcher(lines.get(k));
          if (m.find()) {
            violations.add(sources.relativize(file) + ":" + (k + 1) + ": dev.floe." + m.group(1) + " ("
                + lines.get(k).strip() + ")");
          }
        }
      }
    }
    assertThat(files).as("server source files found").isGreaterThan(10);
    assertThat(violations).as("server code reaching below the engine's public API (dev.floe)").isEmpty();
  }

  @Test
  void thePatternCatchesImportsAndFullNames() {
    assertThat(BELOW_PUBLIC_API.matcher("import dev.floe.sql.Parser;").find()).isTrue();
    assertThat(BELOW_PUBLIC_API.matcher("x = dev.floe.types.Utf8Text.decode(b);").find()).isTrue();
    assertThat(BELOW_PUBLIC_API.matcher("import dev.floe.Session;").find()).isFalse();
    assertThat(BELOW_PUBLIC_API.matcher("import dev.floe.server.auth.Users;").find()).isFalse();
    assertThat(BELOW_PUBLIC_API.matcher("new dev.floe.server.auth.Users(w)").find()).isFalse();
  }
}
