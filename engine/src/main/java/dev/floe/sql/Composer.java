package dev.floe.sql;

import java.util.ArrayList;
import java.util.List;

/**
 * Builds SQL text from generated pieces and pieces of the user's statement, remembering where each
 * user piece came from, so an error DuckDB reports inside it points at the user's text.
 */
public final class Composer {
  private record Piece(int start, int end, int originalOffset) {}

  private final StringBuilder text = new StringBuilder();
  private final List<Piece> pieces = new ArrayList<>();

  /** Appends generated SQL. */
  public Composer add(String sql) {
    text.append(sql);
    return this;
  }

  /** Appends a piece of the user's statement. */
  public Composer add(Ast.Fragment fragment) {
    int start = text.length();
    text.append(fragment.text());
    pieces.add(new Piece(start, text.length(), fragment.offset()));
    return this;
  }

  /** Appends another composition, keeping where its user pieces came from. */
  public Composer add(Composer other) {
    int shift = text.length();
    text.append(other.text);
    for (Piece p : other.pieces) {
      pieces.add(new Piece(p.start() + shift, p.end() + shift, p.originalOffset()));
    }
    return this;
  }

  public String text() {
    return text.toString();
  }

  /** 1-based position in the user's statement of a 0-based offset in the composed text; 0 if generated. */
  public int position(int offset) {
    for (Piece p : pieces) {
      if (offset >= p.start() && offset < p.end()) {
        return p.originalOffset() + (offset - p.start()) + 1;
      }
    }
    return 0;
  }
}
