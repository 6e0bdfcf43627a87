package dev.floe.read;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.parquet.bytes.BytesUtils;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.format.DataPageHeader;
import org.apache.parquet.format.DataPageHeaderV2;
import org.apache.parquet.format.Encoding;
import org.apache.parquet.format.PageHeader;
import org.apache.parquet.format.PageType;
import org.apache.parquet.format.Util;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;

/**
 * One column chunk of a row group, read as raw bytes: its page headers are parsed, and a page is
 * decompressed and decoded only when a row it holds is wanted. Decodes what Parquet writers use for
 * flat columns — PLAIN and dictionary encodings, RLE definition levels, data pages v1 and v2, zstd,
 * snappy or no compression — and throws {@link Unsupported} for anything else, so the caller reads the
 * file another way.
 */
final class ColumnChunkReader {

  /** The chunk uses an encoding or codec this reader does not decode. */
  static final class Unsupported extends RuntimeException {
    Unsupported(String what) {
      super(what, null, false, false);
    }
  }

  private final ColumnDescriptor column;
  private final PrimitiveTypeName type;
  private final int width;
  private final CompressionCodecName codec;
  /** The chunk as stored; null once every page is decoded ({@link #decodeAll}). */
  private byte[] bytes;
  private final List<Page> pages = new ArrayList<>();
  private Values dictionary;

  /** A data page: where its bytes are and the rows it holds. */
  private record Page(PageHeader header, int offset, long firstRow, int rows) {}

  /** Pages decoded so far (the key column is searched, then read for the rows found). */
  private final java.util.Map<Page, Decoded> decoded = new java.util.IdentityHashMap<>();

  ColumnChunkReader(FileChannel file, ColumnChunkMetaData meta, ColumnDescriptor column) throws IOException {
    this.column = column;
    this.type = column.getPrimitiveType().getPrimitiveTypeName();
    this.width = switch (type) {
      case INT32, FLOAT -> 4;
      case INT64, DOUBLE -> 8;
      case FIXED_LEN_BYTE_ARRAY -> column.getPrimitiveType().getTypeLength();
      default -> 0;
    };
    this.codec = meta.getCodec();
    if (codec != CompressionCodecName.ZSTD && codec != CompressionCodecName.SNAPPY
        && codec != CompressionCodecName.UNCOMPRESSED) {
      throw new Unsupported("codec " + codec);
    }
    if (column.getMaxRepetitionLevel() > 0 || type == PrimitiveTypeName.INT96) {
      throw new Unsupported("column " + column);
    }
    long size = meta.getTotalSize();
    if (size > Integer.MAX_VALUE - 16) {
      throw new Unsupported("a column chunk of " + size + " bytes");
    }
    bytes = new byte[(int) size];
    ByteBuffer buffer = ByteBuffer.wrap(bytes);
    long at = meta.getStartingPos();
    while (buffer.hasRemaining()) {
      int n = file.read(buffer, at + buffer.position());
      if (n < 0) {
        throw new IOException("the file ends inside column " + String.join(".", column.getPath()));
      }
    }
    ByteArrayInputStream in = new ByteArrayInputStream(bytes);
    long row = 0;
    while (in.available() > 0) {
      int start = bytes.length - in.available();
      PageHeader h = Util.readPageHeader(in);
      int body = bytes.length - in.available();
      if (h.getCompressed_page_size() < 0 || body + (long) h.getCompressed_page_size() > bytes.length) {
        throw new IOException("a page of column " + String.join(".", column.getPath()) + " at " + start
            + " runs past its chunk");
      }
      if (h.getType() == PageType.DICTIONARY_PAGE) {
        if (h.getDictionary_page_header().getEncoding() != Encoding.PLAIN
            && h.getDictionary_page_header().getEncoding() != Encoding.PLAIN_DICTIONARY) {
          throw new Unsupported("dictionary encoding " + h.getDictionary_page_header().getEncoding());
        }
        byte[] plain = decompress(body, h.getCompressed_page_size(), h.getUncompressed_page_size());
        dictionary = plainValues(ByteBuffer.wrap(plain).order(ByteOrder.LITTLE_ENDIAN),
            h.getDictionary_page_header().getNum_values());
      } else if (h.getType() == PageType.DATA_PAGE || h.getType() == PageType.DATA_PAGE_V2) {
        int rows = h.getType() == PageType.DATA_PAGE ? h.getData_page_header().getNum_values()
            : h.getData_page_header_v2().getNum_values();
        pages.add(new Page(h, body, row, rows));
        row += rows;
      }
      in.skip(h.getCompressed_page_size());
    }
  }

  /**
   * Decodes every page now and lets go of the stored bytes: the reader is then read-only, safe to share
   * between threads once published, and searches sorted integer pages by bisection.
   *
   * @return this reader
   */
  ColumnChunkReader decodeAll() {
    long size = 0;
    for (Page p : pages) {
      Decoded d = decode(p);
      if (d.plain != null) {
        d.plain.checkAscending();
      }
      size += p.header().getUncompressed_page_size() + (d.ids != null ? 4L * d.ids.length : 0)
          + (d.defined != null ? d.defined.length : 0);
    }
    footprint = size + (dictionary != null ? dictionary.b.capacity() : 0);
    bytes = null;
    return this;
  }

  /** Roughly the heap a reader {@link #decodeAll decoded whole} holds, in bytes. */
  long footprint() {
    return footprint;
  }

  private long footprint;

  /** Rows (indexes in the row group) whose value equals {@code key}: Integer, Long or byte[]. */
  List<Integer> find(Object key) {
    List<Integer> hits = new ArrayList<>();
    int dictionaryId = -2; // -2: not looked up yet; -1: the dictionary does not hold the key
    for (Page p : pages) {
      Decoded d = decode(p);
      if (d.ids != null && dictionaryId == -2) {
        dictionaryId = dictionary.indexOf(key);
      }
      // the values of the page's defined rows that equal the key, by their index among those values
      int[] matches = d.ids != null ? matches(d.ids, dictionaryId) : d.plain.indexesOf(key);
      if (matches.length == 0) {
        continue;
      }
      if (d.defined == null) {
        for (int m : matches) {
          hits.add((int) (p.firstRow() + m));
        }
        continue;
      }
      int nonNull = 0;
      int next = 0;
      for (int r = 0; r < p.rows() && next < matches.length; r++) {
        if (d.defined[r] && nonNull++ == matches[next]) {
          hits.add((int) (p.firstRow() + r));
          next++;
        }
      }
    }
    return hits;
  }

  /** The indexes of {@code ids} equal to {@code id} (none for -1). */
  private static int[] matches(int[] ids, int id) {
    Hits hits = new Hits();
    for (int k = 0; id >= 0 && k < ids.length; k++) {
      if (ids[k] == id) {
        hits.add(k);
      }
    }
    return hits.toArray();
  }

  /** A growing list of ascending indexes. */
  private static final class Hits {
    private int[] out = new int[4];
    private int n;

    void add(int k) {
      if (n == out.length) {
        out = Arrays.copyOf(out, n * 2);
      }
      out[n++] = k;
    }

    int[] toArray() {
      return Arrays.copyOf(out, n);
    }
  }

  /**
   * The values at the given ascending rows: Boolean, Integer, Long, Float, Double or byte[] (null for
   * NULL).
   */
  Object[] valuesAt(List<Integer> rows) {
    Object[] out = new Object[rows.size()];
    int next = 0;
    for (Page p : pages) {
      if (next >= rows.size()) {
        break;
      }
      if (rows.get(next) >= p.firstRow() + p.rows()) {
        continue; // not decompressed
      }
      Decoded d = decode(p);
      int nonNull = 0;
      int r = 0;
      while (next < rows.size() && rows.get(next) < p.firstRow() + p.rows()) {
        int target = (int) (rows.get(next) - p.firstRow());
        if (d.defined == null) {
          nonNull = target; // every row before it has a value
          r = target;
        }
        for (; r < target; r++) {
          if (d.defined[r]) {
            nonNull++;
          }
        }
        out[next++] = d.defined != null && !d.defined[target] ? null : d.value(nonNull);
      }
    }
    return out;
  }

  // ------------------------------------------------------------------ pages

  /** A decoded data page: which rows are defined, and their values. */
  private final class Decoded {
    boolean[] defined;
    Values plain;
    int[] ids;

    Object value(int k) {
      return ids != null ? dictionary.value(ids[k]) : plain.value(k);
    }
  }

  private Decoded decode(Page p) {
    Decoded d = decoded.get(p);
    if (d == null) {
      if (bytes == null) {
        throw new IllegalStateException("a page of a shared reader was not decoded");
      }
      d = decodePage(p);
      decoded.put(p, d);
    }
    return d;
  }

  private Decoded decodePage(Page p) {
    Decoded d = new Decoded();
    int maxDef = column.getMaxDefinitionLevel();
    ByteBuffer values;
    Encoding encoding;
    if (p.header().getType() == PageType.DATA_PAGE) {
      DataPageHeader h = p.header().getData_page_header();
      encoding = h.getEncoding();
      byte[] page = decompress(p.offset(), p.header().getCompressed_page_size(),
          p.header().getUncompressed_page_size());
      ByteBuffer b = ByteBuffer.wrap(page).order(ByteOrder.LITTLE_ENDIAN);
      if (maxDef > 0) {
        if (h.getDefinition_level_encoding() != Encoding.RLE) {
          throw new Unsupported("definition levels in " + h.getDefinition_level_encoding());
        }
        int length = b.getInt();
        d.defined = defined(b.slice(b.position(), length).order(ByteOrder.LITTLE_ENDIAN), p.rows(), maxDef);
        b.position(b.position() + length);
      }
      values = b.slice().order(ByteOrder.LITTLE_ENDIAN);
    } else {
      DataPageHeaderV2 h = p.header().getData_page_header_v2();
      encoding = h.getEncoding();
      int levels = h.getRepetition_levels_byte_length() + h.getDefinition_levels_byte_length();
      if (maxDef > 0) {
        d.defined = defined(ByteBuffer.wrap(bytes, p.offset() + h.getRepetition_levels_byte_length(),
            h.getDefinition_levels_byte_length()).slice().order(ByteOrder.LITTLE_ENDIAN), p.rows(), maxDef);
      }
      int compressed = p.header().getCompressed_page_size() - levels;
      int uncompressed = p.header().getUncompressed_page_size() - levels;
      byte[] data = !h.isSetIs_compressed() || h.isIs_compressed()
          ? decompress(p.offset() + levels, compressed, uncompressed)
          : Arrays.copyOfRange(bytes, p.offset() + levels, p.offset() + levels + compressed);
      values = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
    }
    int count = p.rows();
    if (d.defined != null) {
      count = 0;
      for (boolean b : d.defined) {
        count += b ? 1 : 0;
      }
    }
    switch (encoding) {
      case PLAIN -> d.plain = plainValues(values, count);
      case PLAIN_DICTIONARY, RLE_DICTIONARY -> {
        if (dictionary == null) {
          throw new Unsupported("a dictionary-encoded page without a dictionary");
        }
        int bitWidth = values.get() & 0xff;
        d.ids = new int[count];
        rle(values, bitWidth, d.ids, count);
      }
      default -> throw new Unsupported("encoding " + encoding);
    }
    return d;
  }

  /** Which rows are defined; null when all are (one run of the highest level, as writers give it). */
  private static boolean[] defined(ByteBuffer levels, int rows, int maxDef) {
    int width = BytesUtils.getWidthFromMaxInt(maxDef);
    ByteBuffer peek = levels.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    int header = uleb(peek);
    if ((header & 1) == 0 && header >>> 1 >= rows) {
      int value = 0;
      for (int k = 0; k < (width + 7) / 8; k++) {
        value |= (peek.get() & 0xff) << (8 * k);
      }
      if (value == maxDef) {
        return null;
      }
    }
    int[] l = new int[rows];
    rle(levels, width, l, rows);
    boolean[] defined = new boolean[rows];
    for (int i = 0; i < rows; i++) {
      defined[i] = l[i] == maxDef;
    }
    return defined;
  }

  /** Decodes {@code n} values of Parquet's RLE / bit-packing hybrid encoding. */
  static void rle(ByteBuffer in, int bitWidth, int[] out, int n) {
    int bytesPerValue = (bitWidth + 7) / 8;
    int i = 0;
    while (i < n) {
      int header = uleb(in);
      if ((header & 1) == 0) {
        int count = header >>> 1;
        int value = 0;
        for (int k = 0; k < bytesPerValue; k++) {
          value |= (in.get() & 0xff) << (8 * k);
        }
        int end = Math.min(n, i + count);
        Arrays.fill(out, i, end, value);
        i = end;
      } else {
        int values = (header >>> 1) * 8;
        long buffer = 0;
        int bits = 0;
        int mask = bitWidth == 32 ? -1 : (1 << bitWidth) - 1;
        for (int k = 0; k < values; k++) {
          while (bits < bitWidth) {
            buffer |= (long) (in.get() & 0xff) << bits;
            bits += 8;
          }
          if (i < n) {
            out[i++] = (int) (buffer & mask);
          }
          buffer >>>= bitWidth;
          bits -= bitWidth;
        }
      }
    }
  }

  private static int uleb(ByteBuffer in) {
    int value = 0;
    int shift = 0;
    while (true) {
      int b = in.get() & 0xff;
      value |= (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        return value;
      }
      shift += 7;
      if (shift > 28) {
        throw new IllegalStateException("a malformed run header");
      }
    }
  }

  /**
   * Zstd decompression contexts for reuse: making one allocates zstd's native state, which cost more
   * than decompressing a point read's page. At most this many are kept (native memory a context frees
   * only when closed); more readers at once make their own and close them.
   */
  private static final java.util.concurrent.BlockingQueue<com.github.luben.zstd.ZstdDecompressCtx> ZSTD =
      new java.util.concurrent.ArrayBlockingQueue<>(2 * Runtime.getRuntime().availableProcessors());

  private byte[] decompress(int offset, int compressed, int uncompressed) {
    switch (codec) {
      case UNCOMPRESSED -> {
        return Arrays.copyOfRange(bytes, offset, offset + compressed);
      }
      case ZSTD -> {
        byte[] out = new byte[uncompressed];
        com.github.luben.zstd.ZstdDecompressCtx zstd = ZSTD.poll();
        if (zstd == null) {
          zstd = new com.github.luben.zstd.ZstdDecompressCtx();
        }
        int n;
        try {
          n = zstd.decompressByteArray(out, 0, uncompressed, bytes, offset, compressed);
        } catch (com.github.luben.zstd.ZstdException e) {
          n = -1;
        } finally {
          if (!ZSTD.offer(zstd)) {
            zstd.close();
          }
        }
        if (n != uncompressed) {
          throw new IllegalStateException("a zstd page of column " + String.join(".", column.getPath())
              + " does not decompress to its size");
        }
        return out;
      }
      case SNAPPY -> {
        byte[] out = new byte[uncompressed];
        try {
          int n = org.xerial.snappy.Snappy.uncompress(bytes, offset, compressed, out, 0);
          if (n != uncompressed) {
            throw new IllegalStateException("a snappy page does not decompress to its size");
          }
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
        return out;
      }
      default -> throw new Unsupported("codec " + codec);
    }
  }

  // ------------------------------------------------------------------ PLAIN values

  private Values plainValues(ByteBuffer b, int count) {
    if (type == PrimitiveTypeName.BINARY) {
      int[] starts = new int[count];
      int[] ends = new int[count];
      int at = b.position();
      for (int k = 0; k < count; k++) {
        int length = b.getInt(at);
        if (length < 0 || at + 4L + length > b.limit()) {
          throw new IllegalStateException("a malformed string in column " + String.join(".", column.getPath()));
        }
        starts[k] = at + 4;
        ends[k] = at + 4 + length;
        at = ends[k];
      }
      return new Values(b, count, starts, ends);
    }
    return new Values(b, count, null, null);
  }

  /** PLAIN-encoded values of this chunk's type; binary ones located by their offsets. */
  private final class Values {
    final ByteBuffer b;
    final int base;
    final int[] starts;
    final int[] ends;
    /** How many values there are. */
    final int count;
    /** Integer values known to be in ascending order ({@link #checkAscending}): searched by bisection. */
    boolean ascending;

    Values(ByteBuffer b, int count, int[] starts, int[] ends) {
      this.count = count;
      this.b = b;
      this.base = b.position();
      this.starts = starts;
      this.ends = ends;
    }

    Object value(int k) {
      return switch (type) {
        case BOOLEAN -> (b.get(base + k / 8) >> (k % 8) & 1) != 0;
        case INT32 -> b.getInt(base + 4 * k);
        case INT64 -> b.getLong(base + 8 * k);
        case FLOAT -> b.getFloat(base + 4 * k);
        case DOUBLE -> b.getDouble(base + 8 * k);
        case FIXED_LEN_BYTE_ARRAY -> {
          byte[] v = new byte[width];
          b.get(base + width * k, v);
          yield v;
        }
        case BINARY -> {
          byte[] v = new byte[ends[k] - starts[k]];
          b.get(starts[k], v);
          yield v;
        }
        default -> throw new Unsupported("type " + type);
      };
    }

    /**
     * The indexes of the values equal to {@code key} (Integer, Long or byte[]), ascending; integer keys
     * are unboxed once and compared in a loop of their own.
     */
    int[] indexesOf(Object key) {
      Hits hits = new Hits();
      if (ascending) {
        long v = ((Number) key).longValue();
        int lo = 0;
        int hi = count; // the first index whose value is >= v
        while (lo < hi) {
          int mid = (lo + hi) >>> 1;
          if (integer(mid) < v) {
            lo = mid + 1;
          } else {
            hi = mid;
          }
        }
        for (int k = lo; k < count && integer(k) == v; k++) {
          hits.add(k);
        }
      } else if (type == PrimitiveTypeName.INT64) {
        long v = (Long) key;
        for (int k = 0, at = base; k < count; k++, at += 8) {
          if (b.getLong(at) == v) {
            hits.add(k);
          }
        }
      } else if (type == PrimitiveTypeName.INT32) {
        int v = (Integer) key;
        for (int k = 0, at = base; k < count; k++, at += 4) {
          if (b.getInt(at) == v) {
            hits.add(k);
          }
        }
      } else {
        for (int k = 0; k < count; k++) {
          if (equals(k, key)) {
            hits.add(k);
          }
        }
      }
      return hits.toArray();
    }

    private long integer(int k) {
      return type == PrimitiveTypeName.INT64 ? b.getLong(base + 8 * k) : b.getInt(base + 4 * k);
    }

    /** Notes whether the values are integers in ascending order (a table sorted by its key has them so). */
    void checkAscending() {
      if (type != PrimitiveTypeName.INT64 && type != PrimitiveTypeName.INT32) {
        return;
      }
      for (int k = 1; k < count; k++) {
        if (integer(k) < integer(k - 1)) {
          return;
        }
      }
      ascending = true;
    }

    /** The index of the first value equal to {@code key}, or -1. */
    int indexOf(Object key) {
      for (int k = 0; k < count; k++) {
        if (equals(k, key)) {
          return k;
        }
      }
      return -1;
    }

    private boolean equals(int k, Object key) {
      return switch (type) {
        case INT32 -> b.getInt(base + 4 * k) == (Integer) key;
        case INT64 -> b.getLong(base + 8 * k) == (Long) key;
        case FIXED_LEN_BYTE_ARRAY -> Arrays.equals(b.array(), b.arrayOffset() + base + width * k,
            b.arrayOffset() + base + width * (k + 1), (byte[]) key, 0, ((byte[]) key).length);
        case BINARY -> Arrays.equals(b.array(), b.arrayOffset() + starts[k], b.arrayOffset() + ends[k], (byte[]) key,
            0, ((byte[]) key).length);
        default -> throw new Unsupported("a key of type " + type);
      };
    }
  }
}
