// The review page: a file list, each file's diff loaded as it comes into view, and
// decisions per file and per hunk kept by the Pencil process that serves this page
// (so a reload shows them again). Nothing here is fetched from anywhere but that server.

const state = { summary: null, decisions: {}, phase: "reviewing", outcome: null, view: "unified", loaded: new Map() };
// What the person has typed into each reason box, by file and hunk: a decision saved meanwhile re-renders its file, and
// what was typed into another box of it (a hunk's reason before its Drop) must survive that.
const drafts = new Map();

/** A reason box that keeps its draft across re-renders; `saved` is the reason already recorded, if any. */
function reasonInput(key, saved, attrs) {
  const input = el("input", { ...attrs, class: "reason", type: "text", "data-draft": key });
  input.addEventListener("input", () => drafts.set(key, input.value));
  input.value = drafts.has(key) ? drafts.get(key) : saved || "";
  return input;
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
  return node;
}

async function api(path, body) {
  const res = await fetch(path, {
    method: body === undefined ? "GET" : "POST",
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  const data = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (!res.ok) throw new Error(data.error || `HTTP ${res.status}`);
  return data;
}

function say(text, kind) {
  const bar =
    document.getElementById("message") || document.getElementById("bar").appendChild(el("p", { id: "message" }));
  bar.className = kind || "";
  bar.textContent = text;
}

async function load() {
  const s = await api("/api/state");
  state.summary = s.summary;
  state.decisions = s.decisions;
  state.phase = s.phase;
  state.outcome = s.outcome;
  state.loaded.clear();
  renderAll();
}

function renderAll() {
  const { summary } = state;
  const t = summary.totals;
  document.getElementById("goal").textContent = summary.goal;
  const flagged = summary.files.filter((f) => f.flags.length > 0).length;
  document
    .getElementById("totals")
    .replaceChildren(
      el("span", { class: "id" }, summary.id),
      ` · ${t.files} ${t.files === 1 ? "file" : "files"}, `,
      el("span", { class: "add" }, `+${t.added}`),
      " ",
      el("span", { class: "del" }, `−${t.removed}`),
      summary.models.length ? ` · ${summary.models.join(", ")}` : "",
      flagged ? el("span", { class: "flag" }, ` ⚠ ${flagged} flagged`) : "",
      " · ",
      el(
        "button",
        { id: "view-toggle", type: "button", onclick: toggleView },
        state.view === "unified" ? "Side by side" : "Unified",
      ),
    );
  const warnings = summary.instructions || [];
  // The model's opinion of the diff against the goal: one line, recorded with the changeset.
  const opinion = summary.intent
    ? [
        el(
          "span",
          { id: "intent-opinion", class: summary.intent.warns ? "opinion warns" : "opinion" },
          summary.intent.line,
        ),
      ]
    : [];
  document
    .getElementById("intent")
    .replaceChildren(
      ...opinion,
      ...warnings.map((w) =>
        el(
          "span",
          { class: "warning" },
          el("b", {}, "⚠ after-instructions"),
          ` read ${w.source}${w.kind === "hidden" ? " (hidden text)" : ""}${w.within ? ` (in ${w.within})` : ""}: “${w.quote}”`,
        ),
      ),
    );
  renderNav();
  const main = document.getElementById("diffs");
  main.replaceChildren(...summary.files.map((f) => fileSection(f)));
  observe();
  renderBar();
  if (state.phase !== "reviewing") showPhase();
}

function decisionWords(f) {
  const d = state.decisions[f.path];
  if (!d || d.digest !== f.digest) return ["", "undecided"];
  if (d.decision === "approve") return ["approved", "approved"];
  if (d.decision === "reject") return ["rejected", "rejected"];
  const say = Object.values(d.hunks || {});
  return [`hunks ${say.filter((h) => h.keep).length} kept / ${say.filter((h) => !h.keep).length} dropped`, "hunks"];
}

function renderNav() {
  const nav = document.getElementById("files");
  nav.replaceChildren(
    el("p", { class: "count" }, `${decidedCount()} of ${state.summary.files.length} decided`),
    el(
      "ol",
      {},
      state.summary.files.map((f) => {
        const [words, cls] = decisionWords(f);
        return el(
          "li",
          { class: cls },
          el("a", { href: `#f-${f.index}` }, f.path),
          " ",
          el("span", { class: "add" }, f.binary ? "bin" : `+${f.added}`),
          " ",
          el("span", { class: "del" }, f.binary ? "" : `−${f.removed}`),
          words ? el("span", { class: "state" }, ` ${words}`) : "",
        );
      }),
    ),
  );
}

function decidedCount() {
  return state.summary.files.filter((f) => decisionWords(f)[1] !== "undecided").length;
}

function fileSection(f) {
  const [words, cls] = decisionWords(f);
  const d = state.decisions[f.path];
  const reason = reasonInput(`file:${f.path}`, d && d.reason, {
    placeholder: "Reason (goes back to the agent)",
    "aria-label": `Reason for ${f.path}`,
  });
  const provenance = [
    f.tools.length ? `by ${f.tools.join(", ")}` : "",
    f.models.length ? f.models.join(", ") : "",
    `read before: ${f.readsBefore.length ? f.readsBefore.join(", ") : "nothing"}`,
  ].filter(Boolean);
  return el(
    "section",
    { class: `file ${cls}`, id: `f-${f.index}`, "data-index": f.index },
    el(
      "div",
      { class: "file-head" },
      el("h2", {}, el("span", { class: `kind ${f.kind}` }, f.kind), " ", f.path),
      el(
        "span",
        { class: "counts" },
        f.binary
          ? el("span", { class: "flag" }, "binary")
          : [el("span", { class: "add" }, `+${f.added}`), " ", el("span", { class: "del" }, `−${f.removed}`)],
      ),
      f.flags.map((flag) => el("span", { class: "chip" }, `⚠ ${flag}`)),
      f.mode ? el("span", { class: "chip" }, f.mode) : "",
      el("p", { class: "provenance" }, provenance.join(" · ")),
      el(
        "div",
        { class: "controls" },
        el(
          "button",
          { type: "button", class: "approve", onclick: () => decide(f, { decision: "approve" }) },
          "Approve",
        ),
        el(
          "button",
          { type: "button", class: "reject", onclick: () => decide(f, { decision: "reject", reason: reason.value }) },
          "Reject",
        ),
        reason,
        el("span", { class: "state" }, words),
      ),
    ),
    el("div", { class: "body" }, el("p", { class: "loading" }, "Loading the diff…")),
  );
}

let observer = null;
function observe() {
  observer?.disconnect();
  observer = new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        observer.unobserve(entry.target);
        loadFile(Number(entry.target.dataset.index));
      }
    },
    { rootMargin: "600px 0px" },
  );
  for (const s of document.querySelectorAll("section.file")) observer.observe(s);
}

async function loadFile(index) {
  const file = state.loaded.get(index) || (await api(`/api/file?i=${index}`));
  state.loaded.set(index, file);
  const section = document.getElementById(`f-${index}`);
  if (!section) return;
  section.querySelector(".body").replaceChildren(renderBody(file));
}

function renderBody(file) {
  const parts = [];
  for (const note of file.notes) parts.push(el("p", { class: "note" }, note));
  if (file.binaryInfo) {
    const b = file.binaryInfo;
    parts.push(
      el(
        "p",
        { class: "binary" },
        `Binary file: ${b.before === null ? "new" : `${b.before.toLocaleString("en-US")} bytes`} → ${b.after === null ? "deleted" : `${b.after.toLocaleString("en-US")} bytes`}`,
      ),
      el("p", { class: "hash" }, `SHA-256 ${b.beforeHash || "(none)"} → ${b.afterHash || "(deleted)"}`),
    );
  }
  for (const hunk of file.hunks) parts.push(renderHunk(file, hunk));
  return el("div", {}, parts);
}

function hunkChoice(file, digest) {
  const d = state.decisions[file.path];
  if (!d || d.decision !== "hunks" || d.digest !== file.digest) return null;
  return (d.hunks || {})[digest] || null;
}

function renderHunk(file, hunk) {
  const head = el("div", { class: "hunk-head" }, el("code", {}, hunk.label));
  if (file.splittable && hunk.digest) {
    const choice = hunkChoice(file, hunk.digest);
    const reason = reasonInput(`hunk:${file.path}:${hunk.digest}`, choice && choice.reason, {
      placeholder: "Why drop it? (optional)",
      "aria-label": `Reason for dropping ${hunk.label}`,
    });
    head.append(
      el(
        "button",
        { type: "button", class: "keep", onclick: () => decideHunk(file, hunk.digest, { keep: true }) },
        "Keep",
      ),
      el(
        "button",
        {
          type: "button",
          class: "drop",
          onclick: () => decideHunk(file, hunk.digest, { keep: false, reason: reason.value }),
        },
        "Drop",
      ),
      reason,
      el("span", { class: "state" }, choice ? (choice.keep ? "kept" : "dropped") : "undecided"),
    );
  }
  const table = state.view === "unified" ? unifiedTable(hunk.rows) : splitTable(hunk.rows);
  const choice = hunkChoice(file, hunk.digest);
  return el("div", { class: `hunk ${choice ? (choice.keep ? "kept" : "dropped") : ""}` }, head, table);
}

function code(html) {
  const td = el("td", { class: "code" });
  // The server built this HTML: every character escaped, highlight.js classes and <mark> only.
  td.innerHTML = html;
  return td;
}

function unifiedTable(rows) {
  return el(
    "table",
    { class: "diff unified" },
    el(
      "tbody",
      {},
      rows.map((r) =>
        el(
          "tr",
          { class: rowClass(r.t) },
          el("td", { class: "num" }, r.o ?? ""),
          el("td", { class: "num" }, r.n ?? ""),
          el("td", { class: "sign" }, r.t === "\\" ? "" : r.t),
          code(r.h),
        ),
      ),
    ),
  );
}

function rowClass(t) {
  return t === "+" ? "add" : t === "-" ? "del" : t === "\\" ? "eof" : "ctx";
}

function splitTable(rows) {
  const pairs = [];
  for (let i = 0; i < rows.length; ) {
    const r = rows[i];
    if (r.t === " " || r.t === "\\") {
      pairs.push([r, r]);
      i++;
      continue;
    }
    const dels = [];
    const adds = [];
    while (i < rows.length && rows[i].t === "-") dels.push(rows[i++]);
    while (i < rows.length && rows[i].t === "+") adds.push(rows[i++]);
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) pairs.push([dels[k] || null, adds[k] || null]);
  }
  const side = (r, which) =>
    r
      ? [
          el("td", { class: `num ${rowClass(r.t)}` }, which === "old" ? (r.o ?? "") : (r.n ?? "")),
          Object.assign(code(r.h), { className: `code ${rowClass(r.t)}` }),
        ]
      : [el("td", { class: "num empty" }), el("td", { class: "code empty" })];
  return el(
    "table",
    { class: "diff split" },
    el(
      "tbody",
      {},
      pairs.map(([l, r]) => el("tr", {}, side(l, "old"), side(r, "new"))),
    ),
  );
}

function toggleView() {
  state.view = state.view === "unified" ? "split" : "unified";
  document.getElementById("view-toggle").textContent = state.view === "unified" ? "Side by side" : "Unified";
  for (const [index, file] of state.loaded) {
    const section = document.getElementById(`f-${index}`);
    if (section) section.querySelector(".body").replaceChildren(renderBody(file));
  }
}

/** The summary's entry for a file (the page's file list), whichever view of it a button holds. */
function entry(f) {
  return state.summary.files.find((s) => s.path === f.path);
}

async function decide(f, what) {
  f = entry(f);
  try {
    const res = await api("/api/decide", { path: f.path, decision: { digest: f.digest, ...what } });
    state.decisions = res.decisions;
    refreshFile(f);
    say(`${f.path}: ${what.decision === "approve" ? "approved" : "rejected"}.`);
  } catch (error) {
    say(error.message, "error");
  }
}

async function decideHunk(f, digest, choice) {
  f = entry(f);
  const d = state.decisions[f.path];
  const hunks = d && d.decision === "hunks" && d.digest === f.digest ? { ...d.hunks } : {};
  hunks[digest] = choice;
  try {
    const res = await api("/api/decide", { path: f.path, decision: { digest: f.digest, decision: "hunks", hunks } });
    state.decisions = res.decisions;
    refreshFile(f);
  } catch (error) {
    say(error.message, "error");
  }
}

function refreshFile(f) {
  const old = document.getElementById(`f-${f.index}`);
  // The box being typed in keeps the focus and the caret through the re-render.
  const active = document.activeElement;
  const typing = active && old.contains(active) && active.dataset ? active.dataset.draft : undefined;
  const caret = typing ? [active.selectionStart, active.selectionEnd] : null;
  const fresh = fileSection(f);
  old.replaceWith(fresh);
  const file = state.loaded.get(f.index);
  if (file) fresh.querySelector(".body").replaceChildren(renderBody(file));
  if (typing) {
    const again = [...fresh.querySelectorAll("input[data-draft]")].find((i) => i.dataset.draft === typing);
    if (again) {
      again.focus();
      again.setSelectionRange(caret[0], caret[1]);
    }
  }
  renderNav();
  renderBar();
}

function renderBar() {
  const bar = document.getElementById("bar");
  const message = document.getElementById("message");
  const total = state.summary.files.length;
  const decided = decidedCount();
  bar.replaceChildren(
    el("span", { class: "count" }, `${decided} of ${total} decided`),
    el(
      "button",
      { type: "button", id: "approve-all", onclick: approveAll, disabled: state.phase !== "reviewing" },
      "Approve all (not binary)",
    ),
    el(
      "button",
      {
        type: "button",
        id: "apply",
        class: "primary",
        onclick: apply,
        disabled: state.phase !== "reviewing" || decided < total,
      },
      "Apply",
    ),
    el(
      "button",
      { type: "button", id: "leave", onclick: leave, disabled: state.phase !== "reviewing" },
      "Leave for later",
    ),
    message || el("p", { id: "message" }),
  );
}

async function approveAll() {
  const files = state.summary.files
    .filter((f) => !f.binary && decisionWords(f)[1] === "undecided")
    .map((f) => ({ path: f.path, digest: f.digest }));
  try {
    const res = await api("/api/approve-all", { files });
    state.decisions = res.decisions;
    const binary = state.summary.files.filter((f) => f.binary && decisionWords(f)[1] === "undecided").length;
    for (const f of state.summary.files) refreshFile(f);
    say(
      `Approved ${res.approved.length} file(s).${binary ? ` ${binary} binary change(s) need their own Approve.` : ""}`,
    );
  } catch (error) {
    say(error.message, "error");
  }
}

async function apply() {
  try {
    const res = await api("/api/apply", {});
    state.outcome = res.outcome;
    state.phase = res.phase;
    showPhase();
  } catch (error) {
    say(error.message, "error");
  }
}

async function leave() {
  await api("/api/leave", {}).catch(() => {});
  state.phase = "done";
  state.outcome = null;
  showPhase("Left for later: nothing was applied. Review it again with `pencil review`.");
}

function outcomeLines(o) {
  return [
    ...o.applied.map((p) => el("li", { class: "add" }, `applied ${p}`)),
    ...o.alreadyApplied.map((p) => el("li", {}, `already applied ${p}`)),
    ...o.rejected.map((r) => el("li", { class: "del" }, `rejected ${r.path}${r.reason ? ` — ${r.reason}` : ""}`)),
    ...o.conflicts.map((c) => el("li", { class: "conflict" }, `conflict ${c.path}: ${c.reason}`)),
  ];
}

function showPhase(text) {
  renderBar();
  const box =
    document.getElementById("outcome") || document.getElementById("top").appendChild(el("div", { id: "outcome" }));
  const lines = state.outcome ? el("ul", {}, outcomeLines(state.outcome)) : "";
  if (state.phase === "revising") {
    box.replaceChildren(
      lines,
      el("p", { class: "note" }, "Your reasons went back to the agent; its revision will appear here."),
    );
    setTimeout(poll, 500);
  } else if (state.phase === "done") {
    box.replaceChildren(lines, el("p", { class: "note" }, text || "The review is over: you can close this page."));
    document.body.classList.add("over");
  }
}

async function poll() {
  try {
    const s = await api("/api/state");
    if (s.phase === "reviewing") return load();
    if (s.phase === "done") {
      state.phase = "done";
      return showPhase();
    }
  } catch {
    state.phase = "done";
    return showPhase("The review has ended.");
  }
  setTimeout(poll, 500);
}

document.addEventListener("DOMContentLoaded", () => load().catch((error) => say(error.message, "error")));
