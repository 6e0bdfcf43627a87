package dev.floe.slt;

import dev.floe.Database;
import dev.floe.Floe;
import dev.floe.FloeConfig;
import dev.floe.ObjectStore;
import dev.floe.testing.S3Server;
import dev.floe.testing.S3ServerExtension;
import java.nio.file.Path;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The SQL corpus run on warehouses whose tables are on an S3-compatible server (s3proxy, started here): every
 * file's tables are created, written, mutated, time-travelled and dropped with their data and metadata files
 * on object storage, read through local copies. A location a file asks for under {@code ${warehouse}} is the
 * warehouse directory's, which stays a place tables may be.
 *
 * <p>Four files are not run: they read the tables' files on the local file system with DuckDB's file functions
 * ({@code glob}, {@code read_text}, {@code read_json_auto} of {@code ${warehouse}/...}) to check the layout Floe
 * writes, which on object storage is not on the local file system; {@link dev.floe.S3WarehouseTest} checks it
 * on the server.
 */
class SqlCorpusOnS3Test extends SqlLogicTest {
  @RegisterExtension
  static final S3ServerExtension S3 = new S3ServerExtension();

  private static final java.util.Set<String> LOCAL_LAYOUT = java.util.Set.of("interop.slt", "drop_table.slt",
      "table_properties.slt", "metadata_tables.slt");

  @Override
  boolean runs(Path file) {
    return !LOCAL_LAYOUT.contains(file.getFileName().toString());
  }

  @Override
  Database open(Path warehouse) {
    return Floe.open(FloeConfig.builder(warehouse).objectStore(new ObjectStore("s3://" + S3Server.BUCKET + "/"
        + warehouse.getFileName(), S3.server().storage())).build());
  }
}
