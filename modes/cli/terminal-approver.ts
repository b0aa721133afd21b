import type { Approver, PermissionAnswer, PermissionQuestion } from "../../core/policy/approver.ts";
import { forPerson } from "../../render/person-text.ts";
import { visible } from "../../render/visible-text.ts";
import { wordMeaning } from "./answer-words.ts";
import type { CliIO } from "./io.ts";

/**
 * Asks permission questions at the terminal, one key each: [y]es / [n]o / [a]lways,
 * or [r] and a reason that goes back to the model. Questions are asked one at a time: the tool calls of
 * one model step run in parallel, and a single keystroke must never answer two.
 */
export function terminalApprover(io: CliIO, beforeAsk: () => void): Approver {
  let queue: Promise<unknown> = Promise.resolve();
  return {
    ask(question: PermissionQuestion): Promise<PermissionAnswer> {
      const turn = queue.then(() => askOne(io, question, beforeAsk));
      queue = turn.catch(() => undefined);
      return turn;
    },
  };
}

async function askOne(io: CliIO, question: PermissionQuestion, beforeAsk: () => void): Promise<PermissionAnswer> {
  beforeAsk();
  const c = io.colors;
  // The subject comes from the model: escape anything that could hide or repaint text.
  const subject = visible(question.subject);
  const what =
    question.access === "run"
      ? `Run \`${subject}\``
      : question.access === "send"
        ? `Send ${subject}`
        : `${question.access === "read" ? "Read" : "Write"} ${subject}`;
  // Policy reasons are written for the model; a send question's reason is written for the person.
  const why = question.access === "send" ? question.reason : forPerson(question.reason);
  io.out(`\n${c.yellow("?")} ${c.bold(what)} (${visible(question.tool)})\n  ${c.dim(visible(why))}\n`);
  const scope = question.access === "run" ? "command" : question.access === "send" ? "destination" : "path";
  const keys = question.once ? "ynr" : "ynar";
  const always = question.once ? "" : ` [a]lways for this ${scope}`;
  for (;;) {
    let key = await io.key(`  [y]es [n]o${always} [r]eason: `, keys);
    if (key === null) return { kind: "no", reason: "The user gave no answer." };
    if (key.length > 1) {
      const meaning = wordMeaning(key);
      if (meaning.kind === "key") key = meaning.key;
      else if (meaning.kind === "sounds-like") {
        const sure = await io.key(`  Take "${visible(key)}" as ${meaning.key === "y" ? "yes" : "no"}? [y/N] `, "yn");
        if (sure === null) return { kind: "no", reason: "The user gave no answer." };
        if (sure !== "y") continue;
        key = meaning.key;
      } else {
        io.out(`  "${visible(key)}" is not a key: nothing decided. To refuse with a reason, press r, then type it.\n`);
        continue;
      }
    }
    if (key === "y") return { kind: "yes" };
    if (key === "a" && !question.once) return { kind: "always" };
    if (key === "n") return { kind: "no" };
    if (key === "r") {
      const reason = await io.prompt("  Reason (Enter on an empty line to go back): ");
      if (reason === null) return { kind: "no", reason: "The user gave no answer." };
      if (reason.trim()) return { kind: "no", reason: reason.trim() };
    }
  }
}
