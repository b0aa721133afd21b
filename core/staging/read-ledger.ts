/** What the disk looked like when the agent read a file: compared before any edit of it. */
export interface ReadSnapshot {
  size: number;
  mtimeMs: number;
  hash: string;
}

/**
 * The files read in one session, in order. An edit or overwrite of an existing
 * file needs an entry here, and is refused when the disk no longer matches it.
 */
export class ReadLedger {
  private readonly snapshots = new Map<string, ReadSnapshot | "staged">();
  private readonly order: string[] = [];

  /** Records a read of `real` (shown to the user as `display`); `staged` when the content came from the overlay. */
  record(real: string, display: string, snapshot: ReadSnapshot | "staged"): void {
    if (!this.snapshots.has(real)) this.order.push(display);
    this.snapshots.set(real, snapshot);
  }

  /** The snapshot of the last read of `real`, if any. */
  get(real: string): ReadSnapshot | "staged" | undefined {
    return this.snapshots.get(real);
  }

  /** Paths read so far, first read first: the provenance of the next staged change. */
  readsSoFar(): string[] {
    return [...this.order];
  }
}
