// Kept free of imports: the entry point reads it before `--help`, which must load nothing else (even node:path costs
// a measurable part of a 10 ms start).

/** True inside the single executable (`bun build --compile`): Pencil's files are embedded, not on disk. */
export const STANDALONE: boolean = Bun.isStandaloneExecutable === true;
