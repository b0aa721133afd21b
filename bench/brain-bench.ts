// The second brain's embedded store at scale: 20,000 notes with 1,536-dimension
// vectors (BRAIN_BENCH_N overrides the count). Prints medians and the baselines
// measured in the same run: exact (index-free) search beside HNSW, a bare query's
// round trip beside each search, a bare Bun start beside `brain ask`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { vectorText } from "../brain/note-rows.ts";
import { PgliteStore } from "../brain/pglite-store.ts";
import { median, ms, target, timeRuns } from "./stats.ts";

const N = Number(process.env.BRAIN_BENCH_N ?? 20_000);
const D = 1536;
const TOPICS = 200;
const QUERIES = 100;
const BATCH = 500;

// Deterministic data: notes gather around topics, as real notes do (a store of pure noise has no neighbours to find).
let seed = 42;
const rnd = () => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 2 ** 32 - 0.5;
};
const centers = Array.from({ length: TOPICS }, () => Array.from({ length: D }, rnd));
const near = (topic: number, spread: number) => centers[topic]!.map((x) => +(x + rnd() * spread).toFixed(6));
// A vocabulary of 3,000 made-up words; each note uses 12 of them, so a two-word question matches about 1 % of the notes.
const SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "sa", "do", "fu", "gi", "ho", "ju"];
const WORDS = Array.from(
  { length: 3000 },
  (_, i) => SYLLABLES[i % 15]! + SYLLABLES[Math.floor(i / 15) % 15]! + SYLLABLES[Math.floor(i / 225) % 15]! + "n",
);
const word = (i: number, k: number) => WORDS[((Math.imul(i + 1, 2654435761) >>> 0) + k * 977) % 3000]!;
const content = (i: number) => `Note ${i} about ${Array.from({ length: 12 }, (_, k) => word(i, k)).join(" ")}.`;

const store = await PgliteStore.inMemory();
const db = store.database;

const pgvector = (await db.query<{ v: string }>("select extversion as v from pg_extension where extname = 'vector'"))
  .rows[0]!.v;
console.log(
  `brain-bench: ${N.toLocaleString("en")} notes × ${D} dimensions, embedded store (PGlite with pgvector ${pgvector}, in memory)`,
);

// Bulk insert: pgvector's advice for a load is rows first, HNSW index after; both are timed. Rows go in through
// the store's insertMany (one binary COPY a batch); the baseline, in the same run on a fresh store, is the previous
// path: vectors as pgvector text in a multi-row INSERT (unnest), 500 a statement.
const noteOf = (i: number) => ({
  kind: "text" as const,
  source: null,
  content: content(i),
  title: `Note ${i}`,
  tags: ["bench"],
  summary: "",
  enrichedBy: "bench",
  embeddingModel: "bench:model",
  embedding: near(i % TOPICS, 0.8),
});
const embeddings = Array.from({ length: N }, (_, i) => noteOf(i).embedding);
const batchRates = async (count: number, insert: (ids: number[]) => Promise<unknown>) => {
  const rates: number[] = [];
  for (let b = 0; b < count; b += BATCH) {
    const ids = Array.from({ length: Math.min(BATCH, count - b) }, (_, k) => b + k);
    const start = performance.now();
    await insert(ids);
    rates.push((ids.length / (performance.now() - start)) * 1000);
  }
  return rates;
};
const BEFORE_N = Math.min(N, 2000);
const baselineStore = await PgliteStore.inMemory();
await baselineStore.database.exec("drop index brain_notes_embedding_idx");
const beforeRates = await batchRates(BEFORE_N, (ids) =>
  baselineStore.database.query(
    `insert into brain_notes (kind, content, title, tags, summary, enriched_by, embedding_model, embedding)
     select 'text', c, t, '{bench}', '', 'bench', 'bench:model', v::vector from unnest($1::text[], $2::text[], $3::text[]) as u(c, t, v)`,
    [ids.map(content), ids.map((i) => `Note ${i}`), ids.map((i) => vectorText(embeddings[i])!)],
  ),
);
await baselineStore.close();
await db.exec("drop index brain_notes_embedding_idx");
const insertStart = performance.now();
const afterRates = await batchRates(N, (ids) =>
  store.insertMany(ids.map((i) => ({ ...noteOf(i), embedding: embeddings[i]! }))),
);
const insertMs = performance.now() - insertStart;
const indexStart = performance.now();
await db.exec(
  "set maintenance_work_mem = '256MB'; create index brain_notes_embedding_idx on brain_notes using hnsw (embedding vector_cosine_ops)",
);
const indexMs = performance.now() - indexStart;
const rowsPerSecond = median(afterRates);
const withIndexPerSecond = (N / (insertMs + indexMs)) * 1000;
// One note at a time into the full index: what a dump pays.
const single = await timeRuns(30, () =>
  store.insert({
    kind: "text",
    source: null,
    content: "one more",
    title: "one more",
    tags: ["bench"],
    summary: "",
    enrichedBy: "bench",
    embeddingModel: "bench:model",
    embedding: near(7, 0.8),
  }),
);

// Queries: near a topic, as a question about a stored subject is.
const queries = Array.from({ length: QUERIES }, (_, i) => near((i * 13) % TOPICS, 0.8));
for (const q of queries.slice(0, 10)) await store.matchVector(q, "bench:model", 8, -1); // warm-up
const search = async (efSearch: number) => {
  await db.exec(`set hnsw.ef_search = ${efSearch}`);
  const results: number[][] = [];
  const times = await timeRuns(QUERIES, async () => {
    results.push((await store.matchVector(queries[results.length]!, "bench:model", 8, -1)).map((r) => r.id));
  });
  return { results, times };
};
const hnsw40 = await search(40); // pgvector's default, what match_notes runs with
const hnsw100 = await search(100);
await db.exec("reset hnsw.ef_search");
// Exact search: the same ordering as an expression the index cannot serve, so every vector is compared.
const exactResults: number[][] = [];
const exactTimes = await timeRuns(QUERIES, async () => {
  const { rows } = await db.query<{ id: number }>(
    `select id from brain_notes where embedding_model = 'bench:model' order by (embedding <=> $1::vector) + 0 limit 8`,
    [vectorText(queries[exactResults.length]!)],
  );
  exactResults.push(rows.map((r) => Number(r.id)));
});
const recallOf = (got: number[][]) =>
  got.reduce((sum, ids, i) => sum + ids.filter((id) => exactResults[i]!.includes(id)).length / 8, 0) / QUERIES;
const recall = recallOf(hnsw40.results);
const hnswTimes = hnsw40.times;

const textQueries = Array.from(
  { length: QUERIES },
  (_, i) => `what about the ${word(i * 31, 0)} and ${word(i * 17, 5)}?`,
);
let t = 0;
const textTimes = await timeRuns(QUERIES, () => store.matchText(textQueries[t++]!, 40));
const bare = await timeRuns(QUERIES, () => db.query("select 1"));

const size = (await db.query<{ b: string }>("select pg_total_relation_size('brain_notes') as b")).rows[0]!.b;
const perThousand = (Number(size) / (N + 30)) * 1000;

const textInsert = { name: "vectors as text in a multi-row INSERT", value: median(beforeRates) };
console.log(
  `bulk insert (insertMany, binary COPY, ${BATCH} a batch): median ${Math.round(rowsPerSecond)} notes/s (rows + full-text index; ${ms(insertMs)} in all); baseline, vectors as text in a multi-row INSERT (${BEFORE_N.toLocaleString("en")} notes): median ${Math.round(median(beforeRates))} notes/s; then HNSW build ${(indexMs / 1000).toFixed(1)} s → ${Math.round(withIndexPerSecond)} notes/s overall`,
);
target({
  name: "bulk insert, rows (notes a second)",
  value: rowsPerSecond,
  unit: "/s",
  min: 500,
  baseline: textInsert,
});
target({
  name: "bulk insert with the HNSW build (notes a second)",
  value: withIndexPerSecond,
  unit: "/s",
  min: 500,
  baseline: textInsert,
});
console.log(`one note into the full index (a dump): median ${ms(median(single))}`);
console.log(
  `top-8 vector query (HNSW): median ${ms(median(hnswTimes))}; baseline exact scan median ${ms(median(exactTimes))}, bare query ${ms(median(bare))}`,
);
target({
  name: `top-8 vector query (HNSW), ${N.toLocaleString("en")} notes`,
  value: median(hnswTimes),
  unit: "ms",
  max: 30,
  baseline: { name: "exact scan", value: median(exactTimes) },
});
console.log(
  `recall@8 against exact search: ${recall.toFixed(3)} (with hnsw.ef_search = 100: ${recallOf(hnsw100.results).toFixed(3)}, median ${ms(median(hnsw100.times))})`,
);
target({ name: "recall@8 against exact search", value: recall, unit: "share", min: 0.95 });
console.log(`full-text query (search_notes): median ${ms(median(textTimes))}; baseline bare query ${ms(median(bare))}`);
target({
  name: "full-text query (search_notes)",
  value: median(textTimes),
  unit: "ms",
  max: 20,
  baseline: { name: "a bare query", value: median(bare) },
});
console.log(
  `size: ${(Number(size) / 1024 / 1024).toFixed(1)} MB for ${N.toLocaleString("en")} notes = ${(perThousand / 1024 / 1024).toFixed(2)} MB per 1,000 notes (table, vectors, HNSW and full-text indexes)`,
);
await store.close();

// `brain ask` from process start to the retrieved notes, on a 1,000-note brain on disk; no chat model, so the
// command ends right after retrieval (printing the notes) and the model's own time is out of the figure.
const home = mkdtempSync(join(tmpdir(), "pencil-brain-bench-"));
try {
  const disk = await PgliteStore.open(join(home, "brain"));
  for (let b = 0; b < 1000; b += BATCH) {
    const ids = Array.from({ length: BATCH }, (_, k) => b + k);
    await disk.database.query(
      `insert into brain_notes (kind, content, title, tags, summary, enriched_by) select 'text', c, t, '{bench}', '', 'scripted' from unnest($1::text[], $2::text[]) as u(c, t)`,
      [ids.map(content), ids.map((i) => `Note ${i}`)],
    );
  }
  await disk.close();
  const env = { PATH: process.env.PATH ?? "", HOME: home, PENCIL_HOME: home, NO_COLOR: "1" };
  const index = join(import.meta.dir, "..", "index.ts");
  const spawn = (args: string[]) => () => {
    const r = Bun.spawnSync([process.execPath, ...args], { env, stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`${args.join(" ")} exited ${r.exitCode}: ${r.stderr.toString()}`);
  };
  spawn([index, "brain", "ask", "boiler invoice", "--json"])();
  // BRAIN_BENCH_BEFORE=/path/to/older/index.ts times an older checkout in the same run, interleaved with this one (before/after).
  const before = process.env.BRAIN_BENCH_BEFORE;
  const askTimes: number[] = [];
  const beforeTimes: number[] = [];
  for (let i = 0; i < 15; i++) {
    if (before)
      beforeTimes.push(...(await timeRuns(1, spawn([before, "brain", "ask", "the boiler invoice?", "--json"]))));
    askTimes.push(...(await timeRuns(1, spawn([index, "brain", "ask", "the boiler invoice?", "--json"]))));
  }
  const helpTimes = await timeRuns(10, spawn([index, "--help"]));
  const empty = join(home, "empty.ts");
  await Bun.write(empty, "export {};\n");
  const bunTimes = await timeRuns(10, spawn([empty]));
  // The floor: a process that only opens the embedded database (lock, PGlite with pgvector, schema check) and closes it.
  const floor = join(home, "open-only.ts");
  await Bun.write(
    floor,
    `import { PgliteStore } from ${JSON.stringify(join(import.meta.dir, "..", "brain", "pglite-store.ts"))};\nawait (await PgliteStore.open(${JSON.stringify(join(home, "brain"))})).close();\n`,
  );
  const floorTimes = await timeRuns(10, spawn([floor]));
  const pgliteOpen = await timeRuns(5, async () => (await PgliteStore.open(join(home, "brain"))).close());
  console.log(
    `brain ask, process start → retrieved notes (1,000 notes, no model): median ${ms(median(askTimes))}; ` +
      `${before ? `before (${before}): ${ms(median(beforeTimes))}; ` : ""}` +
      `baselines: bare bun ${ms(median(bunTimes))}, pencil --help ${ms(median(helpTimes))}, a process that only opens and closes the PGlite database ${ms(median(floorTimes))}, opening it in a warm process ${ms(median(pgliteOpen))}`,
  );
  target({
    name: "brain ask, process start → retrieved notes (1,000 notes)",
    value: median(askTimes),
    unit: "ms",
    max: 300,
    baseline: { name: "a process that only opens the database", value: median(floorTimes) },
  });
} finally {
  rmSync(home, { recursive: true, force: true });
}
