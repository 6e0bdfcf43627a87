package dev.floe.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import dev.floe.testing.S3Server;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A warehouse's FileIO: local paths stay local, s3:// goes through local copies that are trimmed to a budget. */
class WarehouseIOTest {
  @TempDir
  Path dir;

  private static void write(WarehouseIO io, String location, String text) throws IOException {
    try (OutputStream out = io.newOutputFile(location).create()) {
      out.write(text.getBytes(StandardCharsets.UTF_8));
    }
  }

  private static String read(WarehouseIO io, String location) throws IOException {
    try (InputStream in = io.newInputFile(location).newStream()) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @Test
  void copiesOfDataFilesBeyondTheBudgetAreTrimmedAndFetchedAgain() throws Exception {
    S3Server.useCredentials();
    try (S3Server s3 = S3Server.start(dir.resolve("s3"))) {
      WarehouseIO io = new WarehouseIO(s3.storage(), dir.resolve("copies"), 0);
      String data = "s3://floe/t/data/a.parquet";
      String manifest = "s3://floe/t/metadata/m.avro";
      write(io, data, "rows");
      write(io, manifest, "manifest");
      String local = dir.resolve("local.txt").toString();
      write(io, local, "here");
      assertThat(Files.readString(s3.objects("t/data/a.parquet"))).isEqualTo("rows");
      assertThat(TableFiles.path(io, data)).exists().startsWith(dir.resolve("copies"));
      assertThat(TableFiles.path(io, local)).isEqualTo(Path.of(local));

      assertThat(io.trim(60_000)).as("just used: spared").isZero();
      assertThat(io.trim(0)).isEqualTo(1);
      assertThat(TableFiles.path(io, data)).doesNotExist();
      assertThat(TableFiles.path(io, manifest)).exists(); // metadata stays
      assertThat(read(io, data)).isEqualTo("rows"); // fetched again
      TableFiles.fetch(io, List.of(data, manifest));
      assertThat(TableFiles.readable(io, data)).exists();
      assertThat(read(io, local)).isEqualTo("here");
      io.close();
    }
  }
}
