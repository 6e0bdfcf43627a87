package dev.floe.cli;

import dev.floe.Result;

/** Prints the rows of one query result. */
interface ResultWriter {

  /**
   * Reads every row of {@code result} and prints them.
   *
   * @return the number of rows printed
   * @throws dev.floe.FloeException if the query fails while its rows are produced; rows printed before stay printed
   */
  long write(Result result);
}
