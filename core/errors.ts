// Error classes front ends map to exit codes; kept free of imports so that
// recognising them loads nothing else.

/** An id (or prefix) that names no changeset, or several: a usage error, exit 2. */
export class UnknownChangesetError extends Error {
  override name = "UnknownChangesetError";
}
