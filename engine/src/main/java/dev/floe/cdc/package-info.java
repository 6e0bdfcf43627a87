/**
 * Change data in, current state out: the envelopes of change streams (Cassandra-style last-write-wins
 * cells, Debezium change events) decoded into {@link dev.floe.cdc.Change}s, and the fold that reconciles
 * them ({@link dev.floe.cdc.RowState#absorb}, {@link dev.floe.cdc.Fold}). Nothing here reads or writes a
 * table: {@code exec.ChangeApply} keeps each key's state in an Iceberg table beside the target and
 * commits both. Every rule is a maximum over an order of cells, so folding the same changes in any order,
 * in any batches, any number of times, reaches the same state.
 */
package dev.floe.cdc;
