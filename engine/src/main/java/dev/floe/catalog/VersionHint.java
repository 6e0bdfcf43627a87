package dev.floe.catalog;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code metadata/version-hint.text}: the table-directory convention (Iceberg's HadoopTables, DuckDB's
 * {@code iceberg_scan}) that lets an engine find the current {@code v<N>.metadata.json} with no catalog.
 * Written after every commit by write-to-temp, fsync, atomic rename.
 */
public final class VersionHint {
  public static final String FILE_NAME = "version-hint.text";
  private static final Pattern FLOE_NAME = Pattern.compile("v(\\d+)\\.metadata\\.json");
  private static final Pattern STANDARD_NAME = Pattern.compile("(\\d+)-[^/]*\\.metadata\\.json");

  private VersionHint() {}

  /** The metadata file name Floe writes for a version: {@code v<N>.metadata.json}. */
  public static String metadataFileName(int version) {
    return "v" + version + ".metadata.json";
  }

  /**
   * The version number of a metadata file, from Floe's {@code v<N>.metadata.json} or the
   * {@code <N>-<uuid>.metadata.json} names that JdbcCatalog and other catalogs write.
   */
  public static OptionalInt versionOf(String metadataLocation) {
    String file = metadataLocation.substring(metadataLocation.lastIndexOf('/') + 1);
    Matcher m = FLOE_NAME.matcher(file);
    if (m.matches()) {
      return OptionalInt.of(Integer.parseInt(m.group(1)));
    }
    m = STANDARD_NAME.matcher(file);
    if (m.matches()) {
      return OptionalInt.of(Integer.parseInt(m.group(1)));
    }
    return OptionalInt.empty();
  }

  /** The version the hint in {@code metadataDir} names, if there is a readable hint. */
  public static OptionalInt read(Path metadataDir) {
    try {
      String text = Files.readString(metadataDir.resolve(FILE_NAME)).strip();
      return text.matches("\\d+") ? OptionalInt.of(Integer.parseInt(text)) : OptionalInt.empty();
    } catch (IOException e) {
      return OptionalInt.empty();
    }
  }

  /** Atomically replaces the hint in {@code metadataDir} with {@code version}. */
  public static void write(Path metadataDir, int version) {
    Path hint = metadataDir.resolve(FILE_NAME);
    Path tmp = metadataDir.resolve("." + FILE_NAME + "." + ProcessHandle.current().pid() + ".tmp");
    try {
      try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
          StandardOpenOption.TRUNCATE_EXISTING)) {
        ch.write(java.nio.ByteBuffer.wrap(Integer.toString(version).getBytes(StandardCharsets.UTF_8)));
        ch.force(true);
      }
      Files.move(tmp, hint, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      LocalFileIO.syncDirectory(metadataDir);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write " + hint, e);
    }
  }
}
