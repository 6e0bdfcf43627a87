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
 * Every commit prepares the new hint in a temporary file that is made durable with the commit's other
 * files ({@link Durable}), and renames it over the hint once the catalog swap succeeded. The rename is
 * not waited for: after a crash the hint may name an older version (readers that follow hints look for
 * newer metadata files, and the next commit rewrites it), but it is never torn.
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

  /**
   * Writes the hint for {@code version} to a new temporary file in {@code metadataDir}, registered with
   * {@link Durable} so the commit's batch fsyncs it; {@link #publish} or {@link #discard} it afterwards.
   */
  public static Path prepare(Path metadataDir, int version) {
    Path tmp = metadataDir.resolve("." + FILE_NAME + "." + ProcessHandle.current().pid() + "."
        + java.util.UUID.randomUUID() + ".tmp");
    try {
      Files.createDirectories(metadataDir);
      try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        ch.write(java.nio.ByteBuffer.wrap(Integer.toString(version).getBytes(StandardCharsets.UTF_8)));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write " + tmp, e);
    }
    Durable.later(tmp);
    return tmp;
  }

  /** Atomically replaces the hint with a prepared one. */
  public static void publish(Path prepared) {
    try {
      Files.move(prepared, prepared.resolveSibling(FILE_NAME), StandardCopyOption.ATOMIC_MOVE,
          StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write " + prepared.resolveSibling(FILE_NAME), e);
    }
  }

  /** Deletes a prepared hint that will not be published. */
  public static void discard(Path prepared) {
    try {
      Files.deleteIfExists(prepared);
    } catch (IOException ignored) {
      // a stray temporary file; harmless
    }
  }
}
