import type { Approver, PermissionAnswer, PermissionQuestion } from "../../agent/approver.ts";
import { visible } from "../../render/visible-text.ts";
import { answerWord } from "./answer-words.ts";
import type { CliIO } from "./io.ts";

/**
 * Asks permission questions at the terminal: [y]es / [n]o / [a]lways, or a reason
 * that goes back to the model. Questions are asked one at a time: the tool calls of
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
    question.access === "run" ? `Run \`${subject}\`` : question.access === "send" ? `Send ${subject}` : `${question.access === "read" ? "Read" : "Write"} ${subject}`;
  io.out(`\n${c.yellow("?")} ${c.bold(what)} (${visible(question.tool)})\n  ${c.dim(visible(question.reason))}\n`);
  const scope = question.access === "run" ? "command" : question.access === "send" ? "destination" : "path";
  const always = question.once ? "" : ` / [a]lways for this ${scope}`;
  for (;;) {
    const line = await io.prompt(`  [y]es / [n]o${always} — or type a reason to refuse: `);
    if (line === null) return { kind: "no", reason: "The user gave no answer." };
    const answer = line.trim();
    const word = answerWord(answer);
    if (word === "yes") return { kind: "yes" };
    if (word === "all" && !question.once) return { kind: "always" };
    if (word === "no") return { kind: "no" };
    if (word === null && answer.length > 1) return { kind: "no", reason: answer };
    io.out(question.once ? "  Type y, n, or a reason.\n" : "  Type y, n, a, or a reason.\n");
  }
}
