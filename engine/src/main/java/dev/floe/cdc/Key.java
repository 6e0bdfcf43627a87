package dev.floe.cdc;

import java.util.Arrays;

/** A primary key's values (Iceberg's internal representation), in the key's column order. */
public record Key(Object[] values) {
  @Override
  public boolean equals(Object o) {
    return o instanceof Key k && Arrays.equals(values, k.values);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(values);
  }

  @Override
  public String toString() {
    return Arrays.toString(values);
  }
}
