package dev.floe.exec;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.Table;

/**
 * The live files each manifest names (its added and existing entries), read once per process for
 * expiry: a busy table is expired every second or so, and each run walks every kept version's manifests
 * (hundreds, each an Avro file to parse) to measure the history ({@link HistorySize}) and to find what the
 * kept versions still name ({@link Maintenance#referenced}). A manifest is never changed after it is
 * written, and its name is unique (a UUID), so what was read from it stays true. The most recently used
 * are kept, up to {@value #MAX_ENTRIES} entries in all.
 */
final class ManifestEntries {
  /** A file a manifest names. */
  record Entry(String location, long size, FileContent content) {}

  static final int MAX_ENTRIES = 500_000;

  private static final LinkedHashMap<String, List<Entry>> CACHE = new LinkedHashMap<>(256, 0.75f, true);
  private static long cached;

  private ManifestEntries() {}

  static List<Entry> of(Table table, ManifestFile m) {
    synchronized (CACHE) {
      List<Entry> hit = CACHE.get(m.path());
      if (hit != null) {
        return hit;
      }
    }
    List<Entry> entries = new ArrayList<>();
    try (ManifestReader<? extends ContentFile<?>> reader = m.content() == ManifestContent.DATA
        ? ManifestFiles.read(m, table.io(), table.specs())
        : ManifestFiles.readDeleteManifest(m, table.io(), table.specs())) {
      for (ContentFile<?> f : reader) {
        entries.add(new Entry(f.location(), f.fileSizeInBytes(), f.content()));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<Entry> read = List.copyOf(entries);
    synchronized (CACHE) {
      if (CACHE.put(m.path(), read) == null) {
        cached += read.size();
      }
      Iterator<Map.Entry<String, List<Entry>>> eldest = CACHE.entrySet().iterator();
      while (cached > MAX_ENTRIES && eldest.hasNext()) {
        cached -= eldest.next().getValue().size();
        eldest.remove();
      }
    }
    return read;
  }
}
