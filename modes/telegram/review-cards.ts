import { readState, writeState } from "./state-file.ts";

/** One file as a card showed it, and the owner's decision on it so far. */
export interface CardFile {
  path: string;
  /** FileChange.digest of the content shown. */
  digest: string;
  /**
   * The digest of the content whose whole diff the owner has been shown, inline on the
   * card or delivered by Diff; Approve acts only while it equals `digest`.
   */
  shown?: string;
  decision?: "approved" | "rejected";
  /** The owner's reason for a rejection, sent back to the agent. */
  reason?: string;
  /** A rejection whose reason is still awaited (the prompt's message id, when sent). */
  awaitingReason?: { promptId: number | null; skip: string };
  /** Callback data of this file's Diff, Approve and Reject buttons, and `✂ Hunks` when its diff has several hunks. */
  buttons: { diff: string; approve: string; reject: string; hunks?: string };
  /** Set once `✂ Hunks` was pressed: the file is reviewed hunk by hunk, and Approve all leaves it out. */
  split?: HunkSplit;
}

/** One hunk of a split file as its message showed it, and the owner's say on it. */
interface SplitHunk {
  index: number;
  /** Hunk.digest of the content shown: what its Keep and Drop act on. */
  digest: string;
  decision?: "keep" | "drop";
  /** The hunk's message (its last part, which carries the buttons) and that part's HTML, to edit when decided. */
  messageId: number | null;
  html: string;
  buttons: { keep: string; drop: string };
}

/** A file reviewed hunk by hunk on the phone: its hunks, and `Apply kept` once each is decided. */
export interface HunkSplit {
  hunks: SplitHunk[];
  /** Callback data of `Apply kept`, issued once every hunk is decided, bound to those decisions. */
  applyKept?: string;
  /** Digests of the hunks kept, recorded by Apply kept: the file is approved as base + these hunks. */
  kept?: string[];
}

/** A changeset card: which changeset content it shows, where it is, and the decisions made on it. */
export interface ReviewCard {
  id: string;
  changesetId: string;
  /** Changeset.digest when the card was sent. */
  digest: string;
  chatId: number;
  /** The card's message, once sent. */
  messageId: number | null;
  /** The files this card shows (a large changeset is reviewed in batches, one card each). */
  files: CardFile[];
  /** Callback data of the card's Approve all and Reject all buttons. */
  buttons: { approveAll: string; rejectAll: string; approveAllCommit?: string };
  /** Set by "Approve all & commit": the apply is followed by one git commit of the files it wrote. */
  commitAfter?: boolean;
  /** Files of the changeset in all (more than `files` when it is reviewed in batches). */
  totalFiles: number;
  /** open: buttons live; settled: applied/rejected, result shown; closed: superseded or discarded. */
  state: "open" | "settled" | "closed";
  /** Lines describing the outcome (applied, conflicts, rejected), shown on the card once settled. */
  outcome: string[];
  createdAt: number;
}

interface SavedCards {
  version: 1;
  cards: ReviewCard[];
}

/** Settled and closed cards kept (for their final text); open cards are always kept. */
const KEEP_FINISHED = 20;

/**
 * Review cards, persisted to `$PENCIL_HOME/telegram/cards.json` (atomically) so a
 * card's decisions, and which diffs the owner was shown, survive a restart together
 * with its button tokens.
 */
export class ReviewCards {
  private readonly cards = new Map<string, ReviewCard>();

  constructor(
    /** Where cards persist; null keeps them in memory only. */
    private readonly file: string | null,
    onBad?: (message: string) => void,
  ) {
    if (!file) return;
    const saved = readState<SavedCards>(file, { version: 1, cards: [] }, onBad);
    for (const card of Array.isArray(saved.cards) ? saved.cards : []) {
      if (card && typeof card.id === "string" && Array.isArray(card.files)) this.cards.set(card.id, card);
    }
  }

  /** The card with this id. */
  get(id: string): ReviewCard | undefined {
    return this.cards.get(id);
  }

  /** Open cards, oldest first. */
  open(): ReviewCard[] {
    return [...this.cards.values()].filter((c) => c.state === "open");
  }

  /** Open cards of one changeset. */
  openFor(changesetId: string): ReviewCard[] {
    return this.open().filter((c) => c.changesetId === changesetId);
  }

  /** Saves a new or changed card (and drops the oldest finished cards beyond the limit). */
  put(card: ReviewCard): void {
    this.cards.set(card.id, card);
    const finished = [...this.cards.values()].filter((c) => c.state !== "open");
    for (const old of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED))) this.cards.delete(old.id);
    this.save();
  }

  /** Cards held. */
  get size(): number {
    return this.cards.size;
  }

  private save(): void {
    if (this.file) writeState(this.file, { version: 1, cards: [...this.cards.values()] } satisfies SavedCards);
  }
}
