package dev.floe.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.floe.FloeException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Local copies of an object store's files: fetched once, uploaded on write, trimmed least recently used. */
class CachedFileIOTest {
  @TempDir
  Path remoteDir;
  @TempDir
  Path cacheDir;

  /** The "object store" here is a local directory reached through file:// locations. */
  private String put(String name, int bytes) throws Exception {
    Path p = remoteDir.resolve(name);
    Files.write(p, new byte[bytes]);
    return "file://" + p;
  }

  @Test
  void readsFetchOnceWritesUploadAndTrimSparesMetadataAndRecentFiles() throws Exception {
    CachedFileIO io = new CachedFileIO(new LocalFileIO(), cacheDir);
    String a = put("a.parquet", 1000);
    String b = put("b.parquet", 1000);
    String c = put("c.parquet", 1000);
    String m = put("m-0.avro", 100);
    for (String l : new String[] {a, b, c, m}) {
      try (InputStream in = io.newInputFile(l).newStream()) {
        assertThat(in.readAllBytes()).hasSize(l.endsWith(".avro") ? 100 : 1000);
      }
      assertThat(io.copyPath(l)).exists();
    }
    // a copy is read from local disk: the remote file may go
    Files.delete(remoteDir.resolve("b.parquet"));
    assertThat(io.newInputFile(b).getLength()).isEqualTo(1000);

    long now = System.currentTimeMillis();
    Files.setLastModifiedTime(io.copyPath(a), FileTime.fromMillis(now - 30_000));
    Files.setLastModifiedTime(io.copyPath(b), FileTime.fromMillis(now - 20_000));
    Files.setLastModifiedTime(io.copyPath(c), FileTime.fromMillis(now - 10_000));
    Files.setLastModifiedTime(io.copyPath(m), FileTime.fromMillis(now - 40_000));
    // used within the last minute: nothing goes, however far over the budget
    assertThat(io.trim(0, 60_000)).isZero();
    // least recently used data files first, until within 2,500 bytes; metadata stays
    assertThat(io.trim(2_500, 5_000)).isEqualTo(1);
    assertThat(io.copyPath(a)).doesNotExist();
    assertThat(io.copyPath(b)).exists();
    assertThat(io.copyPath(m)).exists();
    // trimmed copies are fetched again; one gone from the store too is an error that names it
    assertThat(io.localCopy(a)).exists();
    assertThat(io.trim(0, 0)).isEqualTo(3);
    assertThatThrownBy(() -> io.localCopy(b)).isInstanceOf(FloeException.class).hasMessageContaining(b);

    // a written file reaches the store when closed, and its copy stays
    String out = "file://" + remoteDir.resolve("new.parquet");
    try (OutputStream o = io.newOutputFile(out).create()) {
      o.write(new byte[] {1, 2, 3});
    }
    assertThat(Files.readAllBytes(remoteDir.resolve("new.parquet"))).containsExactly(1, 2, 3);
    assertThat(Files.readAllBytes(io.copyPath(out))).containsExactly(1, 2, 3);
    io.deleteFile(out);
    assertThat(remoteDir.resolve("new.parquet")).doesNotExist();
    assertThat(io.copyPath(out)).doesNotExist();
  }
}
