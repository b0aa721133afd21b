import type { Runtime } from "../../app/runtime.ts";
import { sha256 } from "../../core/hash.ts";
import type { Changeset } from "../../core/staging/changeset.ts";
import type { ButtonTokens } from "./button-tokens.ts";
import type { CardFile, ReviewCard } from "./review-cards.ts";

// What a card's state says, and the one change of it that retires buttons: a file's decision.

/** What "Approve all" binds to: the paths and content digests of exactly the files the card shows. */
export function cardDigest(files: readonly { path: string; digest: string }[]): string {
  return sha256(files.map((f) => `${f.path}\0${f.digest}`).join("\n"));
}

/** True when the owner has been shown the whole diff of exactly the content this card file stands for. */
export function isShown(file: CardFile): boolean {
  return file.shown !== undefined && file.shown === file.digest;
}

/** Records the card's files whose whole diffs went inline on it as shown (renderCard checked each digest). */
export function markShown(card: ReviewCard, paths: readonly string[]): void {
  for (const f of card.files) if (paths.includes(f.path)) f.shown = f.digest;
}

/** True when the changeset still holds this file with the same content and no decision recorded elsewhere. */
export function matches(cs: Changeset, file: CardFile): boolean {
  const change = cs.files.find((f) => f.path === file.path);
  return (
    change !== undefined &&
    change.digest === file.digest &&
    (cs.decisions?.[file.path] === undefined || cs.decisions[file.path] === file.decision)
  );
}

/** The token inside callback data. */
export function tokenOf(data: string): string {
  return data.slice(data.indexOf(":") + 1);
}

/** Records a decision and retires the file's Approve/Reject buttons (its Diff stays while the card is open). */
export function decideFile(tokens: ButtonTokens, file: CardFile, decision: "approved" | "rejected"): void {
  file.decision = decision;
  tokens.revoke(tokenOf(file.buttons.approve), tokenOf(file.buttons.reject));
  if (file.buttons.hunks) tokens.revoke(tokenOf(file.buttons.hunks));
  for (const h of file.split?.hunks ?? []) tokens.revoke(tokenOf(h.buttons.keep), tokenOf(h.buttons.drop));
  if (file.split?.applyKept) tokens.revoke(tokenOf(file.split.applyKept));
}

/** The changeset `id`, if it is still pending with exactly the content `digest` names. */
export function loadPending(runtime: Runtime, id: string, digest: string): Changeset | null {
  let cs: Changeset;
  try {
    cs = runtime.store.load(id);
  } catch {
    return null;
  }
  return cs.id === id && cs.status === "pending" && cs.digest === digest ? cs : null;
}

/** The card's changeset, if it is still pending with exactly the content the card was made for. */
export function pendingChangeset(runtime: Runtime, card: ReviewCard): Changeset | null {
  return loadPending(runtime, card.changesetId, card.digest);
}
