package dev.floe.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.ParquetProperties;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The raw column-chunk reader on files parquet-java writes in layouts DuckDB does not: many small
 * pages, data pages v1 and v2, dictionary and plain pages in one chunk, NULL runs long enough for
 * RLE and bit-packed definition levels, snappy and no compression. Every row's value must be what
 * was written, and an encoding it does not decode must be refused, never misread.
 */
class ColumnChunkReaderTest {
  @TempDir
  Path dir;

  private static final MessageType SCHEMA = MessageTypeParser.parseMessageType(
      "message m { optional int64 id = 1; optional int32 small = 2; optional binary name (STRING) = 3;"
          + " optional boolean flag = 4; optional double d = 5; }");

  /** Row {@code i}'s values; NULLs come in runs and scattered. */
  private static Object[] row(int i, Random rnd) {
    boolean nullRun = (i / 300) % 4 == 3;
    return new Object[] {
        nullRun || i % 37 == 0 ? null : (long) i * 3,
        nullRun ? null : rnd.nextInt(5) - 2,
        i % 11 == 0 ? null : "name-" + (i % 50) + (i % 7 == 0 ? "é" : ""),
        i % 13 == 0 ? null : (Boolean) (i % 3 == 0),
        nullRun ? null : i / 7.0};
  }

  private Path write(String name, ParquetProperties.WriterVersion version, boolean dictionary,
      CompressionCodecName codec, List<Object[]> rows) throws Exception {
    Path file = dir.resolve(name);
    SimpleGroupFactory groups = new SimpleGroupFactory(SCHEMA);
    try (ParquetWriter<Group> w = ExampleParquetWriter.builder(new LocalOutputFile(file)).withType(SCHEMA)
        .withConf(new PlainParquetConfiguration()).withWriterVersion(version).withDictionaryEncoding(dictionary)
        .withCompressionCodec(codec).withPageRowCountLimit(250).withPageSize(4096).withDictionaryPageSize(512)
        .withRowGroupRowCountLimit(2500).build()) {
      for (Object[] r : rows) {
        Group g = groups.newGroup();
        if (r[0] != null) {
          g.add("id", (Long) r[0]);
        }
        if (r[1] != null) {
          g.add("small", (Integer) r[1]);
        }
        if (r[2] != null) {
          g.add("name", (String) r[2]);
        }
        if (r[3] != null) {
          g.add("flag", (Boolean) r[3]);
        }
        if (r[4] != null) {
          g.add("d", (Double) r[4]);
        }
        w.write(g);
      }
    }
    return file;
  }

  @Test
  void everyRowReadsBackInV1PagesPlainAndDictionary() throws Exception {
    for (boolean dictionary : new boolean[] {true, false}) {
      for (CompressionCodecName codec : new CompressionCodecName[] {CompressionCodecName.SNAPPY,
          CompressionCodecName.UNCOMPRESSED, CompressionCodecName.ZSTD}) {
        Random rnd = new Random(5);
        List<Object[]> rows = new ArrayList<>();
        for (int i = 0; i < 6000; i++) {
          rows.add(row(i, rnd));
        }
        Path file = write("v1-" + dictionary + "-" + codec + ".parquet", ParquetProperties.WriterVersion.PARQUET_1_0,
            dictionary, codec, rows);
        check(file, rows);
      }
    }
  }

  @Test
  void dataPagesV2ReadBackOrAreRefused() throws Exception {
    Random rnd = new Random(9);
    List<Object[]> rows = new ArrayList<>();
    for (int i = 0; i < 6000; i++) {
      rows.add(row(i, rnd));
    }
    // v2 pages with dictionaries: RLE_DICTIONARY values where the dictionary holds, DELTA encodings past it
    Path file = write("v2.parquet", ParquetProperties.WriterVersion.PARQUET_2_0, true, CompressionCodecName.SNAPPY,
        rows);
    ParquetMetadata footer = footer(file);
    MessageType schema = footer.getFileMetaData().getSchema();
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      // "small" has five values: dictionary-encoded throughout, in v2 pages
      ColumnDescriptor small = schema.getColumns().get(1);
      long first = 0;
      for (BlockMetaData b : footer.getBlocks()) {
        ColumnChunkReader r = new ColumnChunkReader(ch, chunk(b, small), small);
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < b.getRowCount(); i++) {
          all.add(i);
        }
        Object[] values = r.valuesAt(all);
        for (int i = 0; i < values.length; i++) {
          assertThat(values[i]).as("row %d", first + i).isEqualTo(rows.get((int) (first + i))[1]);
        }
        first += b.getRowCount();
      }
      // "id" outgrows its dictionary: DELTA_BINARY_PACKED pages, which the reader refuses
      ColumnDescriptor id = schema.getColumns().get(0);
      assertThatThrownBy(() -> new ColumnChunkReader(ch, chunk(footer.getBlocks().get(0), id), id).find(3L))
          .isInstanceOf(ColumnChunkReader.Unsupported.class);
    }
  }

  /**
   * A reader decoded whole ({@link ColumnChunkReader#decodeAll}, as point reads cache it) finds the
   * same rows as a fresh one: in ascending pages by bisection, with runs of equal keys across page
   * boundaries and NULLs among them, and in unsorted pages by a scan.
   */
  @Test
  void aReaderDecodedWholeFindsWhatAFreshOneFinds() throws Exception {
    for (boolean sorted : new boolean[] {true, false}) {
      Random rnd = new Random(11);
      List<Object[]> rows = new ArrayList<>();
      for (int i = 0; i < 6000; i++) {
        Object[] r = row(i, rnd);
        long id = sorted ? i / 4 : rnd.nextInt(1500); // four rows per key
        r[0] = i % 41 == 0 ? null : id;
        r[1] = i % 29 == 0 ? null : (int) id - 700; // negative keys too
        rows.add(r);
      }
      Path file = write("find-" + sorted + ".parquet", ParquetProperties.WriterVersion.PARQUET_1_0, false,
          CompressionCodecName.ZSTD, rows);
      ParquetMetadata footer = footer(file);
      MessageType schema = footer.getFileMetaData().getSchema();
      try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
        for (BlockMetaData b : footer.getBlocks()) {
          for (int c = 0; c < 2; c++) {
            ColumnDescriptor d = schema.getColumns().get(c);
            ColumnChunkReader whole = new ColumnChunkReader(ch, chunk(b, d), d).decodeAll();
            assertThat(whole.footprint()).isPositive();
            for (long key = -705; key < 1505; key += 1 + rnd.nextInt(3)) {
              Object k = c == 0 ? (Object) key : (Object) (int) key;
              assertThat(whole.find(k)).as("%s key %s", d, k)
                  .isEqualTo(new ColumnChunkReader(ch, chunk(b, d), d).find(k));
            }
          }
        }
      }
    }
  }

  private static ParquetMetadata footer(Path file) throws Exception {
    try (ParquetFileReader reader = ParquetFileReader.open(new LocalInputFile(file),
        ParquetReadOptions.builder(new PlainParquetConfiguration()).build())) {
      return reader.getFooter();
    }
  }

  private static ColumnChunkMetaData chunk(BlockMetaData b, ColumnDescriptor c) {
    for (ColumnChunkMetaData m : b.getColumns()) {
      if (m.getPath().toDotString().equals(String.join(".", c.getPath()))) {
        return m;
      }
    }
    throw new AssertionError(c);
  }

  private void check(Path file, List<Object[]> rows) throws Exception {
    ParquetMetadata footer = footer(file);
    MessageType schema = footer.getFileMetaData().getSchema();
    assertThat(footer.getBlocks()).hasSizeGreaterThan(1);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long first = 0;
      for (BlockMetaData b : footer.getBlocks()) {
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < b.getRowCount(); i++) {
          all.add(i);
        }
        for (int c = 0; c < schema.getColumns().size(); c++) {
          ColumnDescriptor d = schema.getColumns().get(c);
          Object[] values = new ColumnChunkReader(ch, chunk(b, d), d).valuesAt(all);
          for (int i = 0; i < values.length; i++) {
            Object expected = rows.get((int) (first + i))[c];
            Object got = values[i] instanceof byte[] bytes ? new String(bytes, StandardCharsets.UTF_8) : values[i];
            assertThat(got).as("%s, column %s, row %d", file.getFileName(), d, first + i).isEqualTo(expected);
          }
          // a sparse pick reads only the pages holding it
          List<Integer> some = List.of(0, (int) b.getRowCount() / 2, (int) b.getRowCount() - 1);
          Object[] picked = new ColumnChunkReader(ch, chunk(b, d), d).valuesAt(some);
          for (int k = 0; k < some.size(); k++) {
            Object got = picked[k] instanceof byte[] bytes ? new String(bytes, StandardCharsets.UTF_8) : picked[k];
            assertThat(got).isEqualTo(rows.get((int) (first + some.get(k)))[c]);
          }
        }
        // find: every row whose id is the key, and no other
        ColumnDescriptor id = schema.getColumns().get(0);
        for (int i = 0; i < b.getRowCount(); i += 97) {
          Object key = rows.get((int) (first + i))[0];
          if (key == null) {
            continue;
          }
          assertThat(new ColumnChunkReader(ch, chunk(b, id), id).find(key)).containsExactly(i);
        }
        ColumnDescriptor name = schema.getColumns().get(2);
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < b.getRowCount(); i++) {
          if ("name-14é".equals(rows.get((int) (first + i))[2])) {
            expected.add(i);
          }
        }
        assertThat(new ColumnChunkReader(ch, chunk(b, name), name).find("name-14é".getBytes(StandardCharsets.UTF_8)))
            .isEqualTo(expected);
        // an int32 key with many rows among NULL runs; keys no page (and no dictionary) holds
        ColumnDescriptor small = schema.getColumns().get(1);
        List<Integer> ones = new ArrayList<>();
        for (int i = 0; i < b.getRowCount(); i++) {
          if (Integer.valueOf(1).equals(rows.get((int) (first + i))[1])) {
            ones.add(i);
          }
        }
        assertThat(new ColumnChunkReader(ch, chunk(b, small), small).find(1)).isEqualTo(ones);
        assertThat(new ColumnChunkReader(ch, chunk(b, small), small).find(99)).isEmpty();
        assertThat(new ColumnChunkReader(ch, chunk(b, id), id).find(-5L)).isEmpty();
        assertThat(new ColumnChunkReader(ch, chunk(b, name), name).find("absent".getBytes(StandardCharsets.UTF_8)))
            .isEmpty();
        first += b.getRowCount();
      }
    }
  }
}
