import { randomBytes } from "node:crypto";
import { planToGoal, type Plan } from "../../core/plan-schema.ts";
import { sha256 } from "../../core/hash.ts";
import type { ButtonTokens, ResolvedButton } from "./button-tokens.ts";
import { escapeHtml, htmlToPlain } from "./html.ts";
import type { Keyboard, Outbox } from "./outbox.ts";

/** Plans whose buttons stay live; older ones answer "no longer pending". */
const LIVE_PLANS = 3;
/** Steps that get a toggle button (rows of Telegram's keyboard are limited). */
const MAX_TOGGLES = 40;
const PLAN_LIMIT = 4000;

interface PlanState {
  id: string;
  plan: Plan;
  digest: string;
  selected: boolean[];
  messageId: number | null;
  buttons: { toggles: string[]; all: string; none: string; proceed: string };
}

/** A plan ready to run: the agent goal made of the chosen steps. */
export type ProceedFn = (goal: string) => Promise<void>;

/**
 * A plan on the phone: its summary and steps with a toggle button per step (all
 * selected at first), Select all / none, and Proceed, which runs the chosen steps
 * as an agent run. Held in memory: after a restart its buttons are no longer pending.
 */
export class PlanDesk {
  private readonly plans = new Map<string, PlanState>();

  constructor(
    private readonly outbox: Outbox,
    private readonly tokens: ButtonTokens,
    private readonly ownerId: number,
    private readonly proceed: ProceedFn,
  ) {}

  /** Plans with live buttons. */
  get size(): number {
    return this.plans.size;
  }

  /** Sends the plan with its buttons. */
  async present(plan: Plan): Promise<void> {
    const id = `p-${randomBytes(6).toString("hex")}`;
    const digest = sha256(JSON.stringify(plan));
    const toggled = plan.steps.slice(0, MAX_TOGGLES);
    const data = this.tokens.issue([
      ...toggled.map((_, i) => ({
        action: "plan-toggle" as const,
        subject: id,
        item: String(i),
        digest,
        owner: this.ownerId,
      })),
      ...(["plan-all", "plan-none", "plan-proceed"] as const).map((action) => ({
        action,
        subject: id,
        item: "plan",
        digest,
        owner: this.ownerId,
      })),
    ]);
    const n = toggled.length;
    const state: PlanState = {
      id,
      plan,
      digest,
      selected: plan.steps.map(() => true),
      messageId: null,
      buttons: { toggles: data.slice(0, n), all: data[n]!, none: data[n + 1]!, proceed: data[n + 2]! },
    };
    this.plans.set(id, state);
    while (this.plans.size > LIVE_PLANS) {
      const oldest = this.plans.keys().next().value!;
      this.plans.delete(oldest);
      this.tokens.revokeSubject(oldest);
    }
    const msg = await this.outbox.send(this.ownerId, render(state, true), keyboard(state));
    state.messageId = msg.message_id;
  }

  /** Applies a pressed plan button; returns the text to answer the press with. */
  async press(button: ResolvedButton): Promise<string> {
    const state = this.plans.get(button.subject);
    if (!state || state.digest !== button.digest) return "This plan is no longer pending.";
    switch (button.action) {
      case "plan-toggle": {
        const i = Number(button.item);
        if (!Number.isInteger(i) || i < 0 || i >= state.selected.length) return "This plan is no longer pending.";
        state.selected[i] = !state.selected[i];
        break;
      }
      case "plan-all":
        state.selected.fill(true);
        break;
      case "plan-none":
        state.selected.fill(false);
        break;
      case "plan-proceed": {
        const chosen = state.plan.steps.filter((_, i) => state.selected[i]).map((s) => s.id);
        if (chosen.length === 0) return "Select at least one step first.";
        this.plans.delete(state.id);
        this.tokens.revokeSubject(state.id);
        if (state.messageId !== null)
          await this.outbox.edit(
            this.ownerId,
            state.messageId,
            `${render(state, false)}\n\n▶️ <b>Proceeding</b> with ${chosen.length} of ${state.plan.steps.length} steps.`,
          );
        await this.proceed(planToGoal(state.plan, chosen));
        return "Proceeding.";
      }
      default:
        return "This plan is no longer pending.";
    }
    if (state.messageId !== null)
      await this.outbox.edit(this.ownerId, state.messageId, render(state, true), keyboard(state));
    const count = state.selected.filter(Boolean).length;
    return `${count} of ${state.selected.length} steps selected.`;
  }
}

function render(state: PlanState, withDetail: boolean): string {
  const { plan } = state;
  const build = (detail: boolean) => {
    const lines = ["🗺 <b>Plan</b>", escapeHtml(plan.summary), ""];
    plan.steps.forEach((step, i) => {
      lines.push(
        `${state.selected[i] ? "☑️" : "⬜️"} <b>${i + 1}. ${escapeHtml(step.title)}</b> <code>${escapeHtml(step.id)}</code>`,
      );
      if (detail) lines.push(`<i>${escapeHtml(step.detail.slice(0, 400))}</i>`);
      if (detail && step.files.length)
        lines.push(`files: ${step.files.map((f) => `<code>${escapeHtml(f)}</code>`).join(", ")}`);
    });
    if (plan.risks.length) lines.push("", "<b>Risks</b>", ...plan.risks.map((r) => `• ${escapeHtml(r)}`));
    if (plan.openQuestions.length)
      lines.push("", "<b>Open questions</b>", ...plan.openQuestions.map((q) => `• ${escapeHtml(q)}`));
    return lines.join("\n");
  };
  const full = build(withDetail);
  if (htmlToPlain(full).length <= PLAN_LIMIT) return full;
  const short = build(false);
  if (htmlToPlain(short).length <= PLAN_LIMIT) return short;
  let out = `🗺 <b>Plan</b> (${plan.steps.length} steps; too long to show whole)`;
  for (const [i, s] of plan.steps.entries()) {
    const line = `\n${state.selected[i] ? "☑️" : "⬜️"} ${i + 1}. ${escapeHtml(s.title.slice(0, 60))}`;
    if (htmlToPlain(out + line).length > PLAN_LIMIT) break;
    out += line;
  }
  return out;
}

function keyboard(state: PlanState): Keyboard {
  const toggles = state.buttons.toggles.map((data, i) => ({
    text: `${state.selected[i] ? "☑️" : "⬜️"} ${i + 1}`,
    callback_data: data,
  }));
  const rows: Keyboard["inline_keyboard"] = [];
  for (let i = 0; i < toggles.length; i += 5) rows.push(toggles.slice(i, i + 5));
  rows.push([
    { text: "Select all", callback_data: state.buttons.all },
    { text: "Select none", callback_data: state.buttons.none },
  ]);
  rows.push([{ text: "▶️ Proceed", callback_data: state.buttons.proceed }]);
  return { inline_keyboard: rows };
}
