package dev.floe;

import dev.floe.sql.Lexer;
import dev.floe.sql.Token;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code COPY table [(columns)] FROM STDIN [options]} and {@code COPY {table [(columns)] | (query)} TO
 * STDOUT [options]}, in PostgreSQL's current option syntax ({@code WITH (FORMAT csv, HEADER, ...)}) and
 * its older one ({@code WITH CSV HEADER DELIMITER ','}).
 *
 * @param table the table, as written (null for a query)
 * @param columns the column list, empty for all columns
 * @param query for {@code COPY (query) TO}, the query text
 * @param in true for FROM STDIN, false for TO STDOUT
 */
public record Copy(String table, List<String> columns, String query, boolean in, Format format,
    char delimiter, String nullString, boolean header, char quote, char escape) {

  /** PostgreSQL's COPY formats. */
  public enum Format { TEXT, CSV, BINARY }

  /** {@code COPY table [(columns)] FROM STDIN} in plain CSV (comma, double quotes, empty unquoted field NULL). */
  public static Copy csvFrom(String table, List<String> columns) {
    return new Copy(table, List.copyOf(columns), null, true, Format.CSV, ',', "", false, '"', '"');
  }

  /** The command tag of a COPY of {@code rows} rows. */
  public String tag(long rows) {
    return "COPY " + rows;
  }

  /** One row as a COPY TO line (with its newline) in this COPY's text or CSV format. */
  public String line(Object[] values, java.time.ZoneId zone) {
    return dev.floe.exec.CopyFormats.line(this, values, zone);
  }

  /** The header line of COPY TO with HEADER. */
  public String header(List<String> names) {
    return dev.floe.exec.CopyFormats.header(this, names);
  }

  /**
   * The COPY statement a text is, or null if it is not COPY.
   *
   * @throws FloeException 42601 and PostgreSQL's other errors for a COPY it cannot run (42501 for a server
   *     file or a program: a client never reaches the server's files)
   */
  public static Copy parse(String sql) {
    List<Token> t = new ArrayList<>();
    for (Token k : Lexer.tokenize(sql)) {
      if (k.type() != Token.Type.EOF) {
        t.add(k);
      }
    }
    if (t.isEmpty() || !t.get(0).isKeyword("copy")) {
      return null;
    }
    int i = 1;
    String table = null;
    String query = null;
    List<String> columns = new ArrayList<>();
    if (i < t.size() && t.get(i).isOp("(")) {
      int depth = 0;
      int start = t.get(i).end();
      int end = -1;
      for (; i < t.size(); i++) {
        if (t.get(i).isOp("(")) {
          depth++;
        } else if (t.get(i).isOp(")") && --depth == 0) {
          end = t.get(i).start();
          i++;
          break;
        }
      }
      if (end < 0) {
        throw syntax(t, i);
      }
      query = sql.substring(start, end);
    } else {
      int start = i;
      if (i >= t.size() || !t.get(i).isIdentifier()) {
        throw syntax(t, i);
      }
      i++;
      while (i + 1 < t.size() && t.get(i).isOp(".") && t.get(i + 1).isIdentifier()) {
        i += 2;
      }
      table = sql.substring(t.get(start).start(), t.get(i - 1).end());
      if (i < t.size() && t.get(i).isOp("(")) {
        i++;
        while (true) {
          if (i >= t.size() || !t.get(i).isIdentifier()) {
            throw syntax(t, i);
          }
          columns.add(t.get(i).text());
          i++;
          if (i < t.size() && t.get(i).isOp(",")) {
            i++;
            continue;
          }
          if (i < t.size() && t.get(i).isOp(")")) {
            i++;
            break;
          }
          throw syntax(t, i);
        }
      }
    }
    boolean in;
    if (i < t.size() && t.get(i).isKeyword("from")) {
      in = true;
    } else if (i < t.size() && t.get(i).isKeyword("to")) {
      in = false;
    } else {
      throw syntax(t, i);
    }
    i++;
    if (query != null && in) {
      throw new FloeException(SqlState.SYNTAX_ERROR, "COPY (query) cannot be used with FROM", t.get(i - 1).position());
    }
    if (i >= t.size()) {
      throw syntax(t, i);
    }
    Token target = t.get(i);
    if (in && target.isKeyword("stdin") || !in && target.isKeyword("stdout")) {
      i++;
    } else if (target.type() == Token.Type.STRING || target.isKeyword("program")) {
      // PostgreSQL's words for a role without pg_read_server_files: a client never reaches the server's files
      throw new FloeException(SqlState.INSUFFICIENT_PRIVILEGE, target.isKeyword("program")
          ? "permission denied to COPY to or from an external program"
          : "permission denied to COPY " + (in ? "from" : "to") + " a file", null,
          "Anyone can COPY to stdout or from stdin. psql's \\copy command also works for anyone.", target.position(),
          null);
    } else {
      throw syntax(t, i);
    }
    Options o = new Options();
    if (i < t.size() && t.get(i).isKeyword("with")) {
      i++;
    }
    if (i < t.size() && t.get(i).isOp("(")) {
      i = o.modern(t, i + 1);
    } else {
      i = o.legacy(t, i);
    }
    if (i < t.size()) {
      throw syntax(t, i);
    }
    return o.build(table, columns, query, in);
  }

  private static FloeException syntax(List<Token> t, int i) {
    String near = i < t.size() ? "at or near \"" + t.get(i).text() + "\"" : "at end of input";
    int pos = i < t.size() ? t.get(i).position() : t.isEmpty() ? 0 : t.get(t.size() - 1).end() + 1;
    return FloeException.syntax("syntax error " + near, pos);
  }

  /** Collects options in either syntax, then checks them as PostgreSQL does. */
  private static final class Options {
    Format format = Format.TEXT;
    String delimiter;
    String nullString;
    Boolean header;
    String quote;
    String escape;
    int position;

    int modern(List<Token> t, int i) {
      while (true) {
        if (i >= t.size() || !t.get(i).isIdentifier()) {
          throw syntax(t, i);
        }
        String name = t.get(i).value().toLowerCase(Locale.ROOT);
        position = t.get(i).position();
        i++;
        String value = null;
        if (i < t.size() && !t.get(i).isOp(",") && !t.get(i).isOp(")")) {
          if (t.get(i).isOp("(")) {
            // FORCE_QUOTE (cols) and the like: accepted, not applied
            while (i < t.size() && !t.get(i).isOp(")")) {
              i++;
            }
            i++;
          } else {
            value = t.get(i).type() == Token.Type.STRING ? t.get(i).value() : t.get(i).text();
            i++;
          }
        }
        apply(name, value);
        if (i < t.size() && t.get(i).isOp(",")) {
          i++;
          continue;
        }
        if (i < t.size() && t.get(i).isOp(")")) {
          return i + 1;
        }
        throw syntax(t, i);
      }
    }

    int legacy(List<Token> t, int i) {
      while (i < t.size()) {
        Token k = t.get(i);
        position = k.position();
        if (k.isKeyword("binary")) {
          format = Format.BINARY;
          i++;
        } else if (k.isKeyword("csv")) {
          format = Format.CSV;
          i++;
        } else if (k.isKeyword("header")) {
          header = true;
          i++;
        } else if (k.isKeyword("delimiter") || k.isKeyword("null") || k.isKeyword("quote")
            || k.isKeyword("escape")) {
          i++;
          if (i < t.size() && t.get(i).isKeyword("as")) {
            i++;
          }
          if (i >= t.size() || t.get(i).type() != Token.Type.STRING) {
            throw syntax(t, i);
          }
          apply(k.value(), t.get(i).value());
          i++;
        } else if (k.isKeyword("force")) {
          // FORCE QUOTE / FORCE NOT NULL column lists: accepted, not applied
          i++;
          while (i < t.size() && (t.get(i).isIdentifier() || t.get(i).isOp(",") || t.get(i).isOp("*"))) {
            i++;
          }
        } else {
          throw syntax(t, i);
        }
      }
      return i;
    }

    void apply(String name, String value) {
      switch (name) {
        case "format" -> {
          if (value == null) {
            throw invalid("COPY format must be given");
          }
          format = switch (value.toLowerCase(Locale.ROOT)) {
            case "text" -> Format.TEXT;
            case "csv" -> Format.CSV;
            case "binary" -> Format.BINARY;
            default -> throw invalid("COPY format \"" + value + "\" not recognized");
          };
        }
        case "delimiter" -> delimiter = value;
        case "null" -> nullString = value;
        case "header" -> header = value == null || isTrue(value);
        case "quote" -> quote = value;
        case "escape" -> escape = value;
        case "encoding" -> {
          String v = value == null ? "" : value.replace("-", "").toUpperCase(Locale.ROOT);
          if (!v.equals("UTF8")) {
            throw invalid("COPY encoding \"" + value + "\" is not supported: Floe reads and writes UTF8");
          }
        }
        case "freeze", "force_quote", "force_not_null", "force_null", "on_error", "log_verbosity" -> { }
        default -> throw invalid("option \"" + name + "\" not recognized");
      }
    }

    private static boolean isTrue(String v) {
      return switch (v.toLowerCase(Locale.ROOT)) {
        case "true", "on", "1", "yes" -> true;
        case "false", "off", "0", "no" -> false;
        default -> throw invalid("header requires a Boolean value");
      };
    }

    private static FloeException invalid(String message) {
      return new FloeException(SqlState.SYNTAX_ERROR, message);
    }

    Copy build(String table, List<String> columns, String query, boolean in) {
      if (format == Format.BINARY && (delimiter != null || nullString != null || quote != null || escape != null
          || header != null)) {
        throw new FloeException(SqlState.SYNTAX_ERROR, "cannot specify DELIMITER, NULL, HEADER, QUOTE or ESCAPE in BINARY mode");
      }
      if (format != Format.CSV && (quote != null || escape != null)) {
        throw new FloeException(SqlState.FEATURE_NOT_SUPPORTED, "COPY quote and escape are available only in CSV mode");
      }
      if (format == Format.TEXT && Boolean.TRUE.equals(header) && in) {
        // PostgreSQL 15 accepts HEADER in text mode too
      }
      char d = single(delimiter, format == Format.CSV ? ',' : '\t', "COPY delimiter");
      char q = single(quote, '"', "COPY quote");
      char e = single(escape, q, "COPY escape");
      if (d == '\r' || d == '\n') {
        throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "COPY delimiter cannot be newline or carriage return");
      }
      if (format == Format.CSV && d == q) {
        throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, "COPY delimiter and quote must be different");
      }
      String nul = nullString != null ? nullString : format == Format.CSV ? "" : "\\N";
      return new Copy(table, List.copyOf(columns), query, in, format, d, nul, Boolean.TRUE.equals(header),
          q, e);
    }

    private static char single(String v, char otherwise, String what) {
      if (v == null) {
        return otherwise;
      }
      if (v.length() != 1 || v.charAt(0) >= 0x80) {
        throw new FloeException(SqlState.INVALID_PARAMETER_VALUE, what + " must be a single one-byte character");
      }
      return v.charAt(0);
    }
  }
}
