import { formatBytes } from "../core/format-bytes.ts";
import { answerFromNotes, citation, NOT_IN_NOTES } from "./answer.ts";
import type { Embedder } from "./embedder.ts";
import { enrichWithModel, scriptedEnrichment, type ChatModel } from "./enrich.ts";
import type { Enrichment, Note, NoteKind } from "./note.ts";
import type { OriginalFile, Originals } from "./originals.ts";
import { retrieve, type Retrieval, type RetrievedNote } from "./retrieve.ts";
import type { BrainStore } from "./store.ts";
import { DumpRefused } from "../core/errors/dump-refused.ts";

/** The largest note stored, in bytes of UTF-8 text (a bigger paste is refused, with this cap named). */
export const MAX_NOTE_BYTES = 1024 * 1024;

/** Content to store, before enrichment: what it is, where it came from, its text. */
export interface Capture {
  kind: NoteKind;
  source: string | null;
  content: string;
  /** The file the text was read from (a photo), kept beside the note; absent for text and pages. */
  original?: OriginalFile;
}

/** What happened to a dump: the note stored, and how its enrichment and vector went. */
export interface DumpResult {
  note: Note;
  /** `model`: written by the chat model; `scripted`: by fixed rules (no model configured); `failed`: the model failed, the note waits for reindex. */
  enrichment: "model" | "scripted" | "failed";
  enrichError?: string;
  /** The embedding model of the stored vector; null when none was made. */
  embeddedWith: string | null;
  embedError?: string;
  /** Where the capture's original file was kept; absent when it had none. */
  original?: string;
}

/** An answer from the notes: the text, the notes retrieved, the ones cited. */
export interface AskResult {
  question: string;
  /** The answer; when no model is configured or nothing was found, a plain statement of that. */
  answer: string;
  /** `answered`: the model answered; `nothing`: nothing relevant is stored; `no-model`: notes found, no chat model to answer. */
  outcome: "answered" | "nothing" | "no-model";
  retrieved: RetrievedNote[];
  cited: Note[];
  mode: Retrieval["mode"];
  vectorError?: string;
  model?: string;
}

/** What `brain reindex` did. */
export interface ReindexResult {
  enriched: number;
  embedded: number;
  failed: { id: number; reason: string }[];
}

/** The services a brain works with: its store, and the models it may use (each may be absent). */
export interface BrainDeps {
  store: BrainStore;
  embedder: Embedder | null;
  chat: ChatModel | null;
  /** Where originals (photos) are kept; absent: they are not kept (tests of the store alone). */
  originals?: Originals;
}

/** The second brain, independent of any front end: dump, ask, reindex; the store does the rest. */
export class Brain {
  constructor(readonly deps: BrainDeps) {}

  /** Checks a capture's size and emptiness; throws DumpRefused. */
  static check(capture: Capture): void {
    if (!capture.content.trim())
      throw new DumpRefused("There is nothing to store: the note is empty. Give some text, a URL, or a photo.");
    const bytes = Buffer.byteLength(capture.content, "utf8");
    if (bytes > MAX_NOTE_BYTES) {
      throw new DumpRefused(
        `The note is ${formatBytes(bytes)}; a note holds at most 1 MB of text. Nothing was stored: split it into several dumps, or store a link to it.`,
      );
    }
  }

  /** Stores a capture: enriched by the chat model (or rules), embedded when an embedder exists. A failing model never loses the note. */
  async dump(capture: Capture, signal?: AbortSignal): Promise<DumpResult> {
    Brain.check(capture);
    const content = capture.content.replace(/\r\n?/g, "\n");
    const { enrichment, by, status, error: enrichError } = await this.enrich({ ...capture, content }, signal);
    const { embedding, model, error: embedError } = await this.embed(enrichment, content, signal);
    const note = await this.deps.store.insert({
      kind: capture.kind,
      source: capture.source,
      content,
      ...enrichment,
      enrichedBy: by,
      embeddingModel: model,
      embedding,
    });
    let original: string | undefined;
    if (capture.original && this.deps.originals) {
      try {
        original = this.deps.originals.keep(note.id, capture.original);
      } catch (error) {
        // The promise is that the original is kept: a note without it is taken back.
        await this.deps.store.remove(note.id).catch(() => false);
        throw new DumpRefused(
          `The photo could not be kept (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); nothing was stored. Free some space or check ${this.deps.originals.dir}, then try again.`,
        );
      }
    }
    return {
      note,
      ...(original ? { original } : {}),
      enrichment: status,
      embeddedWith: model,
      ...(enrichError ? { enrichError } : {}),
      ...(embedError ? { embedError } : {}),
    };
  }

  /** The path of note `id`'s kept original file, or null when it has none. */
  original(id: number): string | null {
    return this.deps.originals?.find(id) ?? null;
  }

  /** Deletes a note and its original file; returns the note, or null when there is no such note. */
  async forget(id: number): Promise<Note | null> {
    const note = await this.deps.store.get(id);
    if (!note || !(await this.deps.store.remove(id))) return null;
    this.deps.originals?.remove(id);
    return note;
  }

  /** Answers from the notes: retrieval first; the model only when something relevant was found. */
  async ask(question: string, signal?: AbortSignal): Promise<AskResult> {
    const retrieval = await retrieve(this.deps.store, this.deps.embedder, question, undefined, signal);
    const base = {
      question,
      retrieved: retrieval.notes,
      mode: retrieval.mode,
      ...(retrieval.vectorError ? { vectorError: retrieval.vectorError } : {}),
    };
    if (retrieval.notes.length === 0) {
      return { ...base, answer: "Nothing relevant is stored in your notes about that.", outcome: "nothing", cited: [] };
    }
    const chat = this.deps.chat;
    if (!chat) {
      const list = retrieval.notes.map((r) => `${citation(r.note)} ${r.note.summary}`).join("\n");
      return {
        ...base,
        answer: `No chat model is configured, so here are the notes that match, best first:\n${list}`,
        outcome: "no-model",
        cited: [],
      };
    }
    const notes = retrieval.notes.map((r) => r.note);
    const answer = await answerFromNotes(chat, question, notes, signal);
    const cited = notes.filter((n) => answer.cited.includes(n.id));
    if (answer.nothing && cited.length === 0) {
      return { ...base, answer: NOT_IN_NOTES, outcome: "nothing", cited: [], model: chat.label };
    }
    return { ...base, answer: answer.text, outcome: "answered", cited, model: chat.label };
  }

  /** Enriches notes never enriched by a model, and (re-)embeds notes without a vector of the current embedding model. */
  async reindex(
    onNote?: (id: number, done: number, total: number) => void,
    signal?: AbortSignal,
  ): Promise<ReindexResult> {
    const { store, embedder, chat } = this.deps;
    const ids = await store.waitingIds(embedder?.label ?? null, chat !== null);
    const result: ReindexResult = { enriched: 0, embedded: 0, failed: [] };
    let done = 0;
    for (const id of ids) {
      const note = await store.get(id);
      if (!note) continue;
      const reasons: string[] = [];
      let fields: Enrichment = note;
      if (chat && (note.enrichedBy === null || note.enrichedBy === "scripted")) {
        try {
          fields = await enrichWithModel(chat, note.content, note.kind, note.source, signal);
          await store.update(id, { ...fields, enrichedBy: chat.label });
          result.enriched += 1;
        } catch (error) {
          reasons.push(`enrichment: ${(error as Error).message}`);
        }
      }
      if (embedder && note.embeddingModel !== embedder.label) {
        try {
          const embedding = await embedder.embedDocument(embeddingText(fields, note.content), signal);
          await store.update(id, { embedding, embeddingModel: embedder.label });
          result.embedded += 1;
        } catch (error) {
          reasons.push(`embedding: ${(error as Error).message}`);
        }
      }
      if (reasons.length) result.failed.push({ id, reason: reasons.join("; ") });
      onNote?.(id, ++done, ids.length);
    }
    return result;
  }

  private async enrich(
    capture: Capture,
    signal?: AbortSignal,
  ): Promise<{ enrichment: Enrichment; by: string | null; status: DumpResult["enrichment"]; error?: string }> {
    const chat = this.deps.chat;
    if (!chat) return { enrichment: scriptedEnrichment(capture.content), by: "scripted", status: "scripted" };
    try {
      return {
        enrichment: await enrichWithModel(chat, capture.content, capture.kind, capture.source, signal),
        by: chat.label,
        status: "model",
      };
    } catch (error) {
      return {
        enrichment: scriptedEnrichment(capture.content),
        by: null,
        status: "failed",
        error: (error as Error).message,
      };
    }
  }

  private async embed(
    fields: Enrichment,
    content: string,
    signal?: AbortSignal,
  ): Promise<{ embedding: number[] | null; model: string | null; error?: string }> {
    const embedder = this.deps.embedder;
    if (!embedder) return { embedding: null, model: null };
    try {
      return { embedding: await embedder.embedDocument(embeddingText(fields, content), signal), model: embedder.label };
    } catch (error) {
      return { embedding: null, model: null, error: `${embedder.label}: ${(error as Error).message}` };
    }
  }
}

/** The text a note's vector is made of: its title and summary, then its content. */
function embeddingText(fields: Enrichment, content: string): string {
  return `${fields.title}\n${fields.summary}\n\n${content}`;
}
