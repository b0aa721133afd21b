import type { InlineKeyboardButton, Message, Update } from "grammy/types";

/*
 * A fake Telegram Bot API on 127.0.0.1 that the real grammY bot talks to through
 * TELEGRAM_API_ROOT. It answers the methods Pencil uses, keeps the messages it
 * "sent" (so tests can read cards and press their buttons), long-polls getUpdates,
 * and rejects what Telegram rejects: text over 4,096 characters, callback data over
 * 64 bytes, malformed HTML. Faults (429 with retry_after, 400 parse errors) can be
 * injected per method.
 *
 * It also fails the way Telegram and the network do: an update stays queued until a
 * later getUpdates offset confirms it, so a poller that dies before confirming gets it
 * again (and `loseConfirmations` drops confirmations on purpose); a second concurrent
 * getUpdates ends the waiting one with 409 Conflict, as Telegram does; a call can hang
 * (never answered until the client gives up), be handled and then have its connection
 * reset before the answer arrives, or have its connection reset before it is handled.
 */

/** One API call the bot made, in order of arrival. */
export interface RecordedCall {
  method: string;
  /** JSON body, or the multipart fields (files as `{ filename, text, bytes }`). */
  payload: Record<string, any>;
  at: number;
  /** What the fake answered. */
  ok: boolean;
  description?: string;
}

/** A message as the fake holds it: its latest text, markup and parse mode, or the document it carries. */
export interface StoredMessage {
  chat_id: number;
  message_id: number;
  text: string;
  parse_mode?: string;
  reply_markup?: any;
  document?: { filename: string; text: string; bytes?: Uint8Array };
  caption?: string;
  edits: number;
}

/** A failure the next call(s) of a method get instead of their normal answer. */
export interface InjectedFailure {
  error_code: number;
  description: string;
  retry_after?: number;
  /** How many calls fail (default 1). */
  times?: number;
  /** Only calls whose payload passes fail (default: every call). */
  when?: (payload: Record<string, any>) => boolean;
}

/** Which calls of a method a fault hits. */
export interface FaultTarget {
  /** How many calls (default 1). */
  times?: number;
  /** Only calls whose payload passes (default: every call). */
  when?: (payload: Record<string, any>) => boolean;
}

/** A running fake Bot API. */
export interface FakeTelegram {
  /** The API root to give grammY (`client.apiRoot`), e.g. `http://127.0.0.1:41234`. */
  apiRoot: string;
  token: string;
  calls: RecordedCall[];
  /** Messages by `${chat_id}:${message_id}`. */
  messages: Map<string, StoredMessage>;
  /** Queues an update (its update_id is assigned) and wakes a waiting getUpdates; returns the id. */
  pushUpdate(update: Omit<Update, "update_id">): number;
  /** Makes the next call(s) of `method` fail as described. */
  failNext(method: string, failure: InjectedFailure): void;
  /** The next call(s) of `method` are never answered: the connection stays open until the client gives up. */
  hangNext(method: string, target?: FaultTarget): void;
  /** The next call(s) of `method` are handled (a message is really sent), then the connection is reset before the answer. */
  resetAfterHandling(method: string, target?: FaultTarget): void;
  /** The next call(s) of `method` are not handled (nothing is sent): the connection is reset at once, no answer. */
  resetBeforeHandling(method: string, target?: FaultTarget): void;
  /** While true, getUpdates offsets confirm nothing: every update fetched is delivered again to the next poller that starts afresh. */
  loseConfirmations: boolean;
  /** Calls held open by hangNext right now, by method. */
  hanging(): string[];
  /** getUpdates requests received (answered or not). */
  polls(): number;
  /** True while a getUpdates request waits for updates (a new one would end it with 409). */
  pollWaiting(): boolean;
  /** getUpdates requests ended with 409 because another one came in. */
  conflicts(): number;
  /** Calls of one method (every call when omitted). */
  callsOf(method?: string): RecordedCall[];
  /** Resolves with the first call (at index ≥ `from`) of `method` whose payload passes `test`. */
  waitFor(
    method: string,
    test?: (payload: Record<string, any>) => boolean,
    options?: { from?: number; timeoutMs?: number },
  ): Promise<RecordedCall>;
  /** Messages sent to a chat, oldest first. */
  messagesIn(chatId: number): StoredMessage[];
  /** The latest message in a chat that has a button whose label passes `label`, and that button. */
  findButton(
    chatId: number,
    label: (text: string) => boolean,
  ): { message: StoredMessage; button: InlineKeyboardButton.CallbackButton } | null;
  /** Updates queued and not yet fetched. */
  queued(): number;
  /** Holds a file the bot can fetch with getFile and the file endpoint; returns its file_id. */
  addFile(bytes: Uint8Array, options?: { path?: string; size?: number }): string;
  /** Downloads served from the file endpoint (`/file/bot<token>/<path>`), in order. */
  downloads: string[];
  close(): Promise<void>;
}

const MAX_TEXT = 4096;
const MAX_CAPTION = 1024;
const MAX_CALLBACK_DATA = 64;
/** Telegram lets bots download files of at most 20 MB; getFile refuses bigger ones. */
export const MAX_BOT_DOWNLOAD = 20 * 1024 * 1024;
const HTML_TAGS = new Set([
  "b",
  "strong",
  "i",
  "em",
  "u",
  "ins",
  "s",
  "strike",
  "del",
  "code",
  "pre",
  "a",
  "span",
  "tg-spoiler",
  "tg-emoji",
  "blockquote",
]);

/** A message update carrying media (voice, audio, photo, document) instead of text. */
export function mediaUpdate(fromId: number, media: Partial<Message>, chatId = fromId): Omit<Update, "update_id"> {
  return {
    message: {
      message_id: Math.floor(Math.random() * 1e9),
      date: Math.floor(Date.now() / 1000),
      from: { id: fromId, is_bot: false, first_name: `user${fromId}` },
      chat: { id: chatId, type: "private", first_name: `user${chatId}` },
      ...media,
    } as Message,
  } as Omit<Update, "update_id">;
}

/** A message update from a user in a chat (private chat with that user by default); `/commands` get their entity. */
export function messageUpdate(
  fromId: number,
  text: string,
  chat: { id: number; type: "private" | "group" | "supergroup" | "channel" } = { id: fromId, type: "private" },
  extra: Partial<Message> = {},
): Omit<Update, "update_id"> {
  const command = /^\/[A-Za-z0-9_]+(@[A-Za-z0-9_]+)?/.exec(text);
  return {
    message: {
      message_id: Math.floor(Math.random() * 1e9),
      date: Math.floor(Date.now() / 1000),
      from: { id: fromId, is_bot: false, first_name: `user${fromId}` },
      chat:
        chat.type === "private"
          ? { id: chat.id, type: "private", first_name: `user${chat.id}` }
          : ({ id: chat.id, type: chat.type, title: "some chat" } as any),
      text,
      ...(command ? { entities: [{ type: "bot_command", offset: 0, length: command[0].length }] } : {}),
      ...extra,
    } as Message.TextMessage,
  } as Omit<Update, "update_id">;
}

let queryCounter = 0;

/** A button press by `fromId` on a message of chat `chatId` carrying `data`. */
export function callbackUpdate(
  fromId: number,
  data: string,
  message: { chat_id: number; message_id: number } = { chat_id: fromId, message_id: 1 },
): Omit<Update, "update_id"> {
  queryCounter += 1;
  return {
    callback_query: {
      id: `q${Date.now()}${queryCounter}`,
      from: { id: fromId, is_bot: false, first_name: `user${fromId}` },
      chat_instance: "ci",
      data,
      message: {
        message_id: message.message_id,
        date: Math.floor(Date.now() / 1000),
        chat: { id: message.chat_id, type: message.chat_id > 0 ? "private" : "group", first_name: "x" } as any,
        text: "card",
      },
    },
  } as Omit<Update, "update_id">;
}

/** Starts the fake Bot API on a random port of 127.0.0.1 for bot `token`. */
export function startFakeTelegram(token = "123456:TEST-token_abcdefghijklmnop"): FakeTelegram {
  const calls: RecordedCall[] = [];
  const messages = new Map<string, StoredMessage>();
  const updates: Update[] = [];
  const failures = new Map<string, InjectedFailure[]>();
  const hangs = new Map<string, FaultTarget[]>();
  const resets = new Map<string, FaultTarget[]>();
  const earlyResets = new Map<string, FaultTarget[]>();
  let pollCount = 0;
  const held: string[] = [];
  let conflictCount = 0;
  /** Ends the getUpdates request waiting now (if any) with 409, as Telegram does when another one comes in. */
  let endWaitingPoll: (() => void) | null = null;
  const pollers = new Set<() => void>();
  const watchers = new Set<() => void>();
  const nextMessageId = new Map<number, number>();
  let nextUpdateId = 1;
  let confirmed = 0;
  const files = new Map<string, { bytes: Uint8Array; path: string; size: number }>();
  const downloads: string[] = [];

  const wake = () => {
    for (const w of [...pollers]) w();
  };
  const notify = () => {
    for (const w of [...watchers]) w();
  };

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const fileMatch = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
      if (fileMatch) {
        if (fileMatch[1] !== token) return json(401, { ok: false, error_code: 401, description: "Unauthorized" });
        const file = [...files.values()].find((f) => f.path === decodeURIComponent(fileMatch[2]!));
        if (!file) return json(404, { ok: false, error_code: 404, description: "Not Found" });
        downloads.push(file.path);
        return new Response(file.bytes, {
          headers: { "content-type": "application/octet-stream", "content-length": String(file.bytes.length) },
        });
      }
      const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
      if (!match) return json(404, { ok: false, error_code: 404, description: "Not Found" });
      if (match[1] !== token) return json(401, { ok: false, error_code: 401, description: "Unauthorized" });
      const method = match[2]!;
      const payload = await readPayload(req);
      if (method === "getUpdates") pollCount += 1;
      if (take(hangs, method, payload)) {
        held.push(method);
        notify();
        await new Promise<void>((resolve) => req.signal.addEventListener("abort", () => resolve()));
        held.splice(held.indexOf(method), 1);
        return json(499, { ok: false, error_code: 499, description: "client went away" });
      }
      if (take(earlyResets, method, payload)) {
        calls.push({ method, payload, at: Date.now(), ok: false, description: "connection reset before handling" });
        return resetConnection();
      }
      const failure = takeFailure(method, payload);
      if (failure) return answer(method, payload, fail(failure.error_code, failure.description, failure.retry_after));
      const body = method === "getUpdates" ? await getUpdates(payload, req.signal) : handle(method, payload);
      if (take(resets, method, payload)) {
        answer(method, payload, body);
        return resetConnection();
      }
      return answer(method, payload, body);
    },
    // The reset below errors the response stream on purpose; that is not the fake failing.
    error: () => new Response(null, { status: 500 }),
  });

  /** A response that breaks before its first byte: Bun destroys the socket, and the client sees its connection reset. */
  function resetConnection(): Response {
    const stream = new ReadableStream({
      start(controller) {
        controller.error(); // no reason given: Bun would print one as if the fake had failed
      },
    });
    return new Response(stream, { status: 200, headers: { "content-type": "application/json" } });
  }

  function take(table: Map<string, FaultTarget[]>, method: string, payload: Record<string, any>): boolean {
    const list = table.get(method);
    const index = list?.findIndex((f) => !f.when || f.when(payload)) ?? -1;
    if (!list || index < 0) return false;
    const f = list[index]!;
    f.times = (f.times ?? 1) - 1;
    if (f.times <= 0) list.splice(index, 1);
    return true;
  }

  function answer(method: string, payload: Record<string, any>, body: ApiBody): Response {
    if (method !== "getUpdates") {
      calls.push({
        method,
        payload,
        at: Date.now(),
        ok: body.ok,
        ...(body.ok ? {} : { description: body.description }),
      });
      notify();
    }
    return json(body.ok ? 200 : body.error_code, body);
  }

  function takeFailure(method: string, payload: Record<string, any>): InjectedFailure | undefined {
    const list = failures.get(method);
    const index = list?.findIndex((f) => !f.when || f.when(payload)) ?? -1;
    if (!list || index < 0) return undefined;
    const f = list[index]!;
    f.times = (f.times ?? 1) - 1;
    if (f.times <= 0) list.splice(index, 1);
    return f;
  }

  async function getUpdates(payload: Record<string, any>, signal: AbortSignal): Promise<ApiBody> {
    const offset = Number(payload.offset ?? 0);
    if (offset > confirmed && !fake.loseConfirmations) {
      confirmed = offset;
      while (updates.length > 0 && updates[0]!.update_id < offset) updates.shift();
    }
    const fresh = () => updates.filter((u) => u.update_id >= offset);
    // Telegram allows one getUpdates at a time: a new one terminates the one waiting.
    endWaitingPoll?.();
    const limit = Math.min(100, Math.max(1, Number(payload.limit ?? 100)));
    const timeoutMs = Math.min(Number(payload.timeout ?? 0), 50) * 1000;
    let conflict = false;
    if (fresh().length === 0 && timeoutMs > 0) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          pollers.delete(done);
          signal.removeEventListener("abort", done);
          if (endWaitingPoll === terminate) endWaitingPoll = null;
          resolve();
        };
        const terminate = () => {
          conflict = true;
          done();
        };
        const timer = setTimeout(done, timeoutMs);
        pollers.add(done);
        endWaitingPoll = terminate;
        signal.addEventListener("abort", done);
      });
    }
    if (conflict) {
      conflictCount += 1;
      return fail(
        409,
        "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
      );
    }
    return { ok: true, result: fresh().slice(0, limit) };
  }

  function handle(method: string, p: Record<string, any>): ApiBody {
    switch (method) {
      case "getMe":
        return {
          ok: true,
          result: {
            id: Number(token.split(":")[0]),
            is_bot: true,
            first_name: "Pencil",
            username: "pencil_test_bot",
            can_join_groups: false,
            can_read_all_group_messages: false,
            supports_inline_queries: false,
          },
        };
      case "deleteWebhook":
      case "setMyCommands":
      case "sendChatAction":
        return { ok: true, result: true };
      case "answerCallbackQuery":
        if (typeof p.text === "string" && p.text.length > 200) return fail(400, "Bad Request: MESSAGE_TOO_LONG");
        return { ok: true, result: true };
      case "sendMessage":
        return sendMessage(p);
      case "getFile": {
        const file = files.get(String(p.file_id));
        if (!file) return fail(400, "Bad Request: invalid file_id");
        if (file.size > MAX_BOT_DOWNLOAD) return fail(400, "Bad Request: file is too big");
        return {
          ok: true,
          result: { file_id: p.file_id, file_unique_id: `u-${p.file_id}`, file_size: file.size, file_path: file.path },
        };
      }
      case "sendDocument":
        return sendDocument(p);
      case "editMessageText":
        return editMessageText(p);
      case "editMessageReplyMarkup":
        return editReplyMarkup(p);
      case "deleteMessage": {
        const key = `${p.chat_id}:${p.message_id}`;
        if (!messages.delete(key)) return fail(400, "Bad Request: message to delete not found");
        return { ok: true, result: true };
      }
      default:
        return fail(404, `Not Found: method ${method} is not faked`);
    }
  }

  function sendMessage(p: Record<string, any>): ApiBody {
    const problem = checkText(p.text, p.parse_mode, MAX_TEXT) ?? checkMarkup(p.reply_markup);
    if (problem) return fail(400, problem);
    const stored = store(Number(p.chat_id), {
      text: String(p.text),
      parse_mode: p.parse_mode,
      reply_markup: parseJson(p.reply_markup),
    });
    return { ok: true, result: toMessage(stored) };
  }

  function sendDocument(p: Record<string, any>): ApiBody {
    if (!p.document || typeof p.document !== "object")
      return fail(400, "Bad Request: there is no document in the request");
    if (p.caption !== undefined) {
      const problem = checkText(p.caption, p.parse_mode, MAX_CAPTION, "caption");
      if (problem) return fail(400, problem);
    }
    const problem = checkMarkup(p.reply_markup);
    if (problem) return fail(400, problem);
    const stored = store(Number(p.chat_id), {
      text: "",
      document: p.document,
      caption: p.caption,
      reply_markup: parseJson(p.reply_markup),
    });
    return { ok: true, result: toMessage(stored) };
  }

  function editMessageText(p: Record<string, any>): ApiBody {
    const msg = messages.get(`${p.chat_id}:${p.message_id}`);
    if (!msg) return fail(400, "Bad Request: message to edit not found");
    const problem = checkText(p.text, p.parse_mode, MAX_TEXT) ?? checkMarkup(p.reply_markup);
    if (problem) return fail(400, problem);
    const markup = parseJson(p.reply_markup);
    if (msg.text === p.text && JSON.stringify(msg.reply_markup ?? null) === JSON.stringify(markup ?? null)) {
      return fail(
        400,
        "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
      );
    }
    Object.assign(msg, { text: String(p.text), parse_mode: p.parse_mode, reply_markup: markup, edits: msg.edits + 1 });
    return { ok: true, result: toMessage(msg) };
  }

  function editReplyMarkup(p: Record<string, any>): ApiBody {
    const msg = messages.get(`${p.chat_id}:${p.message_id}`);
    if (!msg) return fail(400, "Bad Request: message to edit not found");
    const problem = checkMarkup(p.reply_markup);
    if (problem) return fail(400, problem);
    msg.reply_markup = parseJson(p.reply_markup);
    msg.edits += 1;
    return { ok: true, result: toMessage(msg) };
  }

  function store(chatId: number, content: Partial<StoredMessage>): StoredMessage {
    const id = (nextMessageId.get(chatId) ?? 100) + 1;
    nextMessageId.set(chatId, id);
    const msg: StoredMessage = { chat_id: chatId, message_id: id, text: "", edits: 0, ...content };
    messages.set(`${chatId}:${id}`, msg);
    return msg;
  }

  function messagesIn(chatId: number): StoredMessage[] {
    return [...messages.values()].filter((m) => m.chat_id === chatId).sort((a, b) => a.message_id - b.message_id);
  }

  const fake: FakeTelegram = {
    loseConfirmations: false,
    polls: () => pollCount,
    hanging: () => [...held],
    conflicts: () => conflictCount,
    pollWaiting: () => endWaitingPoll !== null,
    hangNext(method, target = {}) {
      const list = hangs.get(method) ?? [];
      list.push({ ...target });
      hangs.set(method, list);
    },
    resetAfterHandling(method, target = {}) {
      const list = resets.get(method) ?? [];
      list.push({ ...target });
      resets.set(method, list);
    },
    resetBeforeHandling(method, target = {}) {
      const list = earlyResets.get(method) ?? [];
      list.push({ ...target });
      earlyResets.set(method, list);
    },
    apiRoot: `http://127.0.0.1:${server.port}`,
    token,
    calls,
    messages,
    pushUpdate(update) {
      const id = nextUpdateId++;
      updates.push({ ...update, update_id: id } as Update);
      wake();
      return id;
    },
    failNext(method, failure) {
      const list = failures.get(method) ?? [];
      list.push({ ...failure });
      failures.set(method, list);
    },
    callsOf: (method) => (method ? calls.filter((c) => c.method === method) : [...calls]),
    waitFor(method, test = () => true, options = {}) {
      const from = options.from ?? 0;
      const find = () => calls.slice(from).find((c) => c.method === method && c.ok && test(c.payload));
      return new Promise((resolve, reject) => {
        const hit = find();
        if (hit) return resolve(hit);
        const check = () => {
          const found = find();
          if (!found) return;
          clearTimeout(timer);
          watchers.delete(check);
          resolve(found);
        };
        const timer = setTimeout(() => {
          watchers.delete(check);
          reject(
            new Error(
              `fake Telegram: no ${method} call matched within ${options.timeoutMs ?? 15_000} ms; calls: ${calls
                .slice(from)
                .map((c) => c.method)
                .join(", ")}`,
            ),
          );
        }, options.timeoutMs ?? 15_000);
        watchers.add(check);
      });
    },
    messagesIn,
    findButton(chatId, label) {
      for (const message of messagesIn(chatId).reverse()) {
        for (const row of message.reply_markup?.inline_keyboard ?? []) {
          for (const button of row)
            if (typeof button.callback_data === "string" && label(button.text)) return { message, button };
        }
      }
      return null;
    },
    queued: () => updates.length,
    addFile(bytes, options = {}) {
      const id = `file-${files.size + 1}-${Math.random().toString(36).slice(2, 8)}`;
      files.set(id, { bytes, path: options.path ?? `documents/${id}.bin`, size: options.size ?? bytes.length });
      return id;
    },
    downloads,
    async close() {
      wake();
      server.stop(true);
    },
  };
  return fake;
}

type ApiBody =
  | { ok: true; result: unknown }
  | { ok: false; error_code: number; description: string; parameters?: { retry_after: number } };

function fail(code: number, description: string, retryAfter?: number): ApiBody {
  return {
    ok: false,
    error_code: code,
    description,
    ...(retryAfter !== undefined ? { parameters: { retry_after: retryAfter } } : {}),
  };
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

async function readPayload(req: Request): Promise<Record<string, any>> {
  const type = req.headers.get("content-type") ?? "";
  if (type.includes("multipart/form-data")) {
    const form = await req.formData();
    const out: Record<string, any> = {};
    for (const [key, value] of form.entries()) {
      if (typeof value === "string") out[key] = value;
      else
        out[key] = {
          filename: (value as File).name,
          text: await (value as File).text(),
          bytes: new Uint8Array(await (value as File).arrayBuffer()),
        };
    }
    // Files travel as their own parts, referenced from the field as attach://<part name>.
    for (const [key, value] of Object.entries(out)) {
      if (typeof value === "string" && value.startsWith("attach://")) out[key] = out[value.slice("attach://".length)];
    }
    return out;
  }
  const text = await req.text();
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

function parseJson(value: unknown): any {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

function toMessage(m: StoredMessage): Message {
  return {
    message_id: m.message_id,
    date: Math.floor(Date.now() / 1000),
    chat: { id: m.chat_id, type: "private", first_name: "owner" },
    ...(m.document
      ? {
          document: { file_id: `f${m.message_id}`, file_unique_id: `u${m.message_id}`, file_name: m.document.filename },
          caption: m.caption,
        }
      : { text: m.text }),
    ...(m.reply_markup ? { reply_markup: m.reply_markup } : {}),
  } as Message;
}

/** What a user sees of a message text: the text itself, or for HTML the text once tags are dropped and entities decoded. */
export function visibleText(text: string, parseMode?: string): string {
  if (parseMode !== "HTML") return text;
  const parsed = parseHtml(text);
  return typeof parsed === "string" ? parsed : text;
}

/** Telegram's checks on a text: present, valid HTML when parse_mode is HTML, and at most `max` characters once parsed. */
function checkText(value: unknown, parseMode: unknown, max: number, what = "message text"): string | null {
  if (typeof value !== "string" || value.length === 0) return `Bad Request: ${what} is empty`;
  let visible = value;
  if (parseMode === "HTML") {
    const parsed = parseHtml(value);
    if (typeof parsed !== "string") return `Bad Request: can't parse entities: ${parsed.error}`;
    visible = parsed;
  } else if (parseMode !== undefined) {
    return `Bad Request: unsupported parse_mode ${String(parseMode)} in the fake`;
  }
  if (visible.trim().length === 0) return `Bad Request: ${what} is empty`;
  if (visible.length > max)
    return what === "caption" ? "Bad Request: message caption is too long" : "Bad Request: message is too long";
  return null;
}

/** The visible text of Telegram HTML, or why Telegram would refuse it (unknown or unbalanced tags, bad entities, a bare `<`). */
function parseHtml(html: string): string | { error: string } {
  const open: string[] = [];
  let out = "";
  let i = 0;
  while (i < html.length) {
    const c = html[i]!;
    if (c === "<") {
      const end = html.indexOf(">", i);
      if (end < 0) return { error: `Unsupported start tag at byte offset ${i}` };
      const inner = html.slice(i + 1, end);
      const closing = inner.startsWith("/");
      const name = (closing ? inner.slice(1) : inner).trim().split(/\s+/)[0]!.toLowerCase();
      if (!HTML_TAGS.has(name)) return { error: `Unsupported start tag "${name}" at byte offset ${i}` };
      if (closing) {
        if (open.pop() !== name) return { error: `Can't find end tag corresponding to start tag at byte offset ${i}` };
      } else open.push(name);
      i = end + 1;
    } else if (c === "&") {
      const m = /^&(lt|gt|amp|quot|#\d{1,7}|#x[0-9a-fA-F]{1,6});/.exec(html.slice(i, i + 12));
      if (!m) return { error: `Unsupported entity at byte offset ${i}` };
      out += decodeEntity(m[1]!);
      i += m[0].length;
    } else {
      out += c;
      i += 1;
    }
  }
  if (open.length > 0) return { error: `Can't find end tag corresponding to start tag "${open.at(-1)}"` };
  return out;
}

function decodeEntity(name: string): string {
  if (name === "lt") return "<";
  if (name === "gt") return ">";
  if (name === "amp") return "&";
  if (name === "quot") return '"';
  return String.fromCodePoint(name.startsWith("#x") ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10));
}

/** Telegram's checks on inline keyboards: every callback button carries 1–64 bytes of data and a label. */
function checkMarkup(raw: unknown): string | null {
  const markup = parseJson(raw);
  if (!markup?.inline_keyboard) return null;
  for (const row of markup.inline_keyboard as any[][]) {
    for (const button of row) {
      if (typeof button.text !== "string" || button.text.length === 0) return "Bad Request: BUTTON_TEXT_EMPTY";
      if (button.callback_data !== undefined) {
        const bytes = Buffer.byteLength(String(button.callback_data), "utf8");
        if (bytes < 1 || bytes > MAX_CALLBACK_DATA) return "Bad Request: BUTTON_DATA_INVALID";
      }
    }
  }
  return null;
}
