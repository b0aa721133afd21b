import { readFileSync } from "node:fs";
import type { AskResult, Brain, DumpResult } from "../../../brain/brain.ts";
import { DumpRefused } from "../../../core/errors/dump-refused.ts";
import { UsageFailure } from "../../../core/errors/usage-failure.ts";
import { citation } from "../../../brain/answer.ts";
import type { Note } from "../../../brain/note.ts";
import type { CliIO } from "../io.ts";
import type { CommandContext } from "../command-context.ts";
import { renderMarkdown } from "../markdown.ts";

/** The brain's subcommands (shell completion offers them too). */
export const SUBCOMMANDS = ["dump", "ask", "list", "show", "forget", "reindex"] as const;
type Sub = (typeof SUBCOMMANDS)[number];

/** `pencil brain dump|ask|list|show|forget|reindex`: the second brain from the terminal. */
export async function run(ctx: CommandContext): Promise<number> {
  const [sub = "", ...rest] = ctx.args.positionals;
  if (!(SUBCOMMANDS as readonly string[]).includes(sub)) {
    throw new UsageFailure(
      `brain needs one of: ${SUBCOMMANDS.join(", ")} — e.g. pencil brain dump "the boiler code is 4471", pencil brain ask "what was the boiler code?"`,
    );
  }
  if (ctx.args.image !== undefined && sub !== "dump")
    throw new UsageFailure("--image goes with brain dump: pencil brain dump --image FILE");
  const capture = sub === "dump" ? await readCapture(ctx, rest) : undefined;
  const id = sub === "show" || sub === "forget" ? noteId(sub, rest) : undefined;
  if (sub === "ask" && rest.join(" ").trim() === "")
    throw new UsageFailure('brain ask needs a question, e.g. pencil brain ask "what was the boiler service code?"');
  const { openBrain } = await import("../../../brain/open-brain.ts");
  const brain = await openBrain(ctx.env, ctx.args.model ? { model: ctx.args.model } : {});
  try {
    switch (sub as Sub) {
      case "dump":
        return await dump(ctx, brain, capture!);
      case "ask":
        return await ask(ctx, brain, rest.join(" ").trim());
      case "list":
        return await list(ctx, brain);
      case "show":
        return await show(ctx, brain, id!);
      case "forget":
        return await forget(ctx, brain, id!);
      case "reindex":
        return await reindex(ctx, brain);
    }
  } catch (error) {
    if (DumpRefused.isInstance(error)) throw new UsageFailure(error.message);
    throw error;
  } finally {
    await brain.deps.store.close();
  }
  return 0;
}

type CaptureInput = Awaited<ReturnType<typeof readCapture>>;

/** What `brain dump` was given: text (argument or stdin), a URL, or an image file. Refuses empty or oversized text before opening anything. */
async function readCapture(ctx: CommandContext, rest: string[]) {
  if (ctx.args.image !== undefined) {
    if (rest.length > 0) throw new UsageFailure("brain dump --image FILE takes no text; dump the text separately.");
    return { type: "image" as const, path: ctx.args.image };
  }
  let text: string;
  if (rest.length === 1 && rest[0] === "-") {
    text = await new Response(Bun.stdin.stream()).text();
  } else {
    text = rest.join(" ");
  }
  if (!text.trim())
    throw new UsageFailure(
      'brain dump needs something to store: pencil brain dump "some text", a URL, --image FILE, or - to read stdin.',
    );
  const single = text.trim();
  if (/^https?:\/\/\S+$/i.test(single)) return { type: "url" as const, url: single };
  // A paste over the cap is refused here, before the brain's database is started for nothing.
  const { Brain } = await import("../../../brain/brain.ts");
  try {
    Brain.check({ kind: "text", source: null, content: text });
  } catch (error) {
    if (DumpRefused.isInstance(error)) throw new UsageFailure(error.message);
    throw error;
  }
  return { type: "text" as const, text };
}

function noteId(sub: string, rest: string[]): number {
  const raw = (rest[0] ?? "").replace(/^#/, "");
  if (rest.length !== 1 || !/^\d{1,15}$/.test(raw))
    throw new UsageFailure(`brain ${sub} needs one note id, e.g. pencil brain ${sub} 12 (see pencil brain list).`);
  return Number(raw);
}

async function dump(ctx: CommandContext, brain: Brain, input: CaptureInput): Promise<number> {
  const { io } = ctx;
  let result: DumpResult;
  if (input.type === "text") {
    result = await brain.dump({ kind: "text", source: null, content: input.text });
  } else {
    const { captureUrl, captureImage } = await import("../../../brain/capture.ts");
    const { visionFromEnv } = await import("../../../ai/vision.ts");
    const capture =
      input.type === "url"
        ? await captureUrl(input.url, ctx.env)
        : await captureImage(input.path, readFileSync, visionFromEnv(ctx.env));
    result = await brain.dump(capture);
  }
  if (ctx.args.json) {
    io.out(
      `${JSON.stringify({ note: noteJson(result.note, result.original ?? null), enrichment: result.enrichment, enrichError: result.enrichError, embeddedWith: result.embeddedWith, embedError: result.embedError })}\n`,
    );
    return 0;
  }
  const c = io.colors;
  const n = result.note;
  io.out(
    `${c.green("Stored")} ${c.bold(citation(n))}${n.tags.length ? ` ${c.dim(n.tags.map((t) => `#${t}`).join(" "))}` : ""}\n`,
  );
  if (n.summary) io.out(`  ${n.summary}\n`);
  if (result.original) io.out(c.dim(`  Original kept: ${result.original}\n`));
  if (result.enrichment === "scripted") {
    io.out(
      c.dim(
        "  Title, tags and summary are scripted (fixed rules, no model configured); `pencil brain reindex` rewrites them once a model is set.\n",
      ),
    );
  } else if (result.enrichment === "failed") {
    io.out(
      c.yellow(
        `  The model could not enrich it (${result.enrichError}); it is stored as written, and \`pencil brain reindex\` enriches it later.\n`,
      ),
    );
  }
  if (result.embedError)
    io.out(
      c.yellow(
        `  No vector was made (${result.embedError}); it is found by full-text search until \`pencil brain reindex\`.\n`,
      ),
    );
  else if (!result.embeddedWith)
    io.out(
      c.dim("  Full-text search only: no embedding model is configured (set GEMINI_API_KEY, or PENCIL_EMBED_MODEL).\n"),
    );
  return 0;
}

async function ask(ctx: CommandContext, brain: Brain, question: string): Promise<number> {
  const result = await brain.ask(question);
  const { io } = ctx;
  if (ctx.args.json) {
    io.out(`${JSON.stringify(askJson(result))}\n`);
    return 0;
  }
  printAnswer(io, result);
  return 0;
}

function printAnswer(io: CliIO, result: AskResult): void {
  const c = io.colors;
  if (result.vectorError)
    io.err(c.yellow(`Vector search unavailable (${result.vectorError}); full-text search only.\n`));
  if (result.outcome === "no-model") {
    io.out(
      `${c.dim("No chat model is configured (set GROQ_API_KEY), so here are the notes that match, best first:")}\n`,
    );
    for (const r of result.retrieved) io.out(`  ${c.bold(citation(r.note))} ${r.note.summary}\n`);
    return;
  }
  io.out(`${renderMarkdown(io, result.answer)}\n`);
  if (result.cited.length) {
    io.out(`\n${c.dim("Sources:")}\n`);
    for (const n of result.cited)
      io.out(`  ${citation(n)} ${c.dim(`${n.createdAt.slice(0, 10)}${n.source ? ` · ${n.source}` : ""}`)}\n`);
  }
}

async function list(ctx: CommandContext, brain: Brain): Promise<number> {
  const notes = await brain.deps.store.list(20);
  const { io } = ctx;
  if (ctx.args.json) {
    io.out(`${JSON.stringify(notes.map((n) => noteJson(n, brain.original(n.id))))}\n`);
    return 0;
  }
  if (notes.length === 0) {
    io.out('No notes yet. Store one with pencil brain dump "…".\n');
    return 0;
  }
  const c = io.colors;
  for (const n of notes) {
    const waiting =
      n.enrichedBy === null ||
      n.enrichedBy === "scripted" ||
      (brain.deps.embedder !== null && n.embeddingModel !== brain.deps.embedder.label);
    io.out(
      `${c.bold(`#${n.id}`)} ${n.title} ${c.dim(`${n.createdAt.slice(0, 16).replace("T", " ")} ${n.kind}${n.tags.length ? ` ${n.tags.map((t) => `#${t}`).join(" ")}` : ""}${waiting ? " · waits for reindex" : ""}`)}\n`,
    );
  }
  return 0;
}

async function show(ctx: CommandContext, brain: Brain, id: number): Promise<number> {
  const note = await brain.deps.store.get(id);
  if (!note) throw new UsageFailure(`There is no note #${id}. See pencil brain list.`);
  const { io } = ctx;
  const original = brain.original(id);
  if (ctx.args.json) {
    io.out(`${JSON.stringify(noteJson(note, original))}\n`);
    return 0;
  }
  const c = io.colors;
  io.out(`${c.bold(citation(note))}\n`);
  io.out(
    c.dim(
      `${note.createdAt} · ${note.kind}${note.source ? ` · ${note.source}` : ""} · tags: ${note.tags.join(", ") || "none"}\n`,
    ),
  );
  io.out(
    c.dim(
      `enriched by: ${note.enrichedBy ?? "nobody yet (waits for reindex)"} · embedding: ${note.embeddingModel ?? "none"}\n`,
    ),
  );
  if (original) io.out(c.dim(`original: ${original}\n`));
  if (note.summary) io.out(`\n${note.summary}\n`);
  io.out(`\n${note.content}\n`);
  return 0;
}

async function forget(ctx: CommandContext, brain: Brain, id: number): Promise<number> {
  const original = brain.original(id);
  const note = await brain.forget(id);
  if (!note) throw new UsageFailure(`There is no note #${id}. See pencil brain list.`);
  if (ctx.args.json) ctx.io.out(`${JSON.stringify({ forgotten: noteJson(note, original) })}\n`);
  else ctx.io.out(`Forgot ${citation(note)}${original ? " and its original photo" : ""}.\n`);
  return 0;
}

async function reindex(ctx: CommandContext, brain: Brain): Promise<number> {
  const { io } = ctx;
  const { chat, embedder } = brain.deps;
  if (!ctx.args.json) {
    io.out(
      `Enrichment: ${chat ? chat.label : "no chat model configured (titles stay scripted)"} · embeddings: ${embedder ? embedder.label : "none configured (full-text only)"}\n`,
    );
  }
  const result = await brain.reindex((id, done, total) => {
    if (!ctx.args.json) io.err(`\r${done}/${total} (note #${id})`);
  });
  if (ctx.args.json) {
    io.out(`${JSON.stringify(result)}\n`);
    return result.failed.length ? 1 : 0;
  }
  io.err("\n");
  io.out(`Enriched ${result.enriched}, embedded ${result.embedded}.\n`);
  for (const f of result.failed) io.out(io.colors.yellow(`  #${f.id} failed: ${f.reason}\n`));
  if (result.failed.length) io.out("Run pencil brain reindex again when the provider is back.\n");
  return result.failed.length ? 1 : 0;
}

/** A note as `--json` prints it; `original` is the path of its kept photo (null when none), on this machine. */
function noteJson(n: Note, original: string | null = null) {
  return {
    id: n.id,
    createdAt: n.createdAt,
    kind: n.kind,
    source: n.source,
    title: n.title,
    tags: n.tags,
    summary: n.summary,
    content: n.content,
    enrichedBy: n.enrichedBy,
    embeddingModel: n.embeddingModel,
    original,
  };
}

function askJson(r: AskResult) {
  return {
    question: r.question,
    answer: r.answer,
    outcome: r.outcome,
    mode: r.mode,
    model: r.model ?? null,
    cited: r.cited.map((n) => ({ id: n.id, title: n.title })),
    retrieved: r.retrieved.map((x) => ({
      id: x.note.id,
      title: x.note.title,
      score: x.score,
      similarity: x.similarity ?? null,
      textMatch: x.textMatch,
    })),
    ...(r.vectorError ? { vectorError: r.vectorError } : {}),
  };
}
