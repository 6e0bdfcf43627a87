package dev.floe.sql;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Non-overlapping replacements of character ranges in a text, applied at once, with a map from offsets
 * in the edited text back to the original (so errors DuckDB reports on rewritten SQL point at what the
 * user wrote).
 */
public final class TextEdits {
  private record Edit(int start, int end, String replacement, int seq) {}

  private final List<Edit> edits = new ArrayList<>();
  private final List<int[]> applied = new ArrayList<>(); // {newStart, newEnd, origStart, origEnd}

  public void replace(int start, int end, String replacement) {
    edits.add(new Edit(start, end, replacement, edits.size()));
  }

  public boolean isEmpty() {
    return edits.isEmpty();
  }

  /** Applies every edit to {@code text}; ranges must not overlap. */
  public String apply(String text) {
    // An insertion (empty range) goes before a replacement starting at the same offset; of two insertions
    // at one offset the later goes first: it wraps the earlier (x::a::b is rewritten from the inside out).
    edits.sort(Comparator.comparingInt(Edit::start).thenComparingInt(Edit::end)
        .thenComparing((a, b) -> a.start() == a.end() ? Integer.compare(b.seq(), a.seq())
            : Integer.compare(a.seq(), b.seq())));
    StringBuilder out = new StringBuilder(text.length() + 64);
    applied.clear();
    int cursor = 0;
    for (Edit e : edits) {
      if (e.start() < cursor) {
        throw new IllegalStateException("overlapping edits at " + e.start());
      }
      out.append(text, cursor, e.start());
      int newStart = out.length();
      out.append(e.replacement());
      applied.add(new int[] {newStart, out.length(), e.start(), e.end()});
      cursor = e.end();
    }
    out.append(text, cursor, text.length());
    return out.toString();
  }

  /** The offset in the original text of {@code offset} in the edited text (inside an edit: its start). */
  public int toOriginal(int offset) {
    int shift = 0;
    for (int[] a : applied) {
      if (offset < a[0]) {
        break;
      }
      if (offset < a[1]) {
        return a[2];
      }
      shift = a[3] - a[1];
    }
    return offset + shift;
  }
}
