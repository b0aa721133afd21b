import type { Approver, PermissionAnswer, PermissionQuestion } from "../../agent/approver.ts";
import type { CliIO } from "./io.ts";

/** Asks permission questions at the terminal: [y]es / [n]o / [a]lways, or a reason that goes back to the model. */
export function terminalApprover(io: CliIO, beforeAsk: () => void): Approver {
  return {
    async ask(question: PermissionQuestion): Promise<PermissionAnswer> {
      beforeAsk();
      const c = io.colors;
      const what = question.access === "run" ? `Run \`${question.subject}\`` : `${question.access === "read" ? "Read" : "Write"} ${question.subject}`;
      io.out(`\n${c.yellow("?")} ${c.bold(what)} (${question.tool})\n  ${c.dim(question.reason)}\n`);
      const always = question.once ? "" : ` / [a]lways for this ${question.access === "run" ? "command" : "path"}`;
      for (;;) {
        const line = await io.prompt(`  [y]es / [n]o${always} — or type a reason to refuse: `);
        if (line === null) return { kind: "no", reason: "The user gave no answer." };
        const answer = line.trim();
        if (answer === "y" || answer === "yes") return { kind: "yes" };
        if (!question.once && (answer === "a" || answer === "always")) return { kind: "always" };
        if (answer === "n" || answer === "no") return { kind: "no" };
        if (answer.length > 1) return { kind: "no", reason: answer };
        io.out(question.once ? "  Type y, n, or a reason.\n" : "  Type y, n, a, or a reason.\n");
      }
    },
  };
}
