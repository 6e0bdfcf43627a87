package org.apache.iceberg;

/**
 * Floe's access to what Iceberg assigns a file when a commit adds it: the data and file sequence
 * numbers, which a manifest reader would fill in from the committed snapshot. With them, Floe plans a
 * snapshot it just committed from the files it wrote instead of reading back the manifests.
 */
public final class FloeFiles {
  private FloeFiles() {}

  /**
   * A copy of a file added by the commit of a snapshot with this sequence number, as a reader of the
   * manifest that lists it would see it ({@code manifest}: that manifest's location, null if unknown).
   */
  public static <F extends ContentFile<F>> F committed(F file, long sequenceNumber, String manifest) {
    F copy = file.copy();
    if (!(copy instanceof BaseFile<?> base)) {
      throw new IllegalArgumentException("not an Iceberg file: " + file.getClass().getName());
    }
    base.setDataSequenceNumber(sequenceNumber);
    base.setFileSequenceNumber(sequenceNumber);
    base.setManifestLocation(manifest);
    return copy;
  }
}
