import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Brain } from "../../brain/brain.ts";
import { captureImage, capturePhoto, captureUrl, type CaptureUrlOptions } from "../../brain/capture.ts";
import { visionFromEnv } from "../../ai/vision.ts";
import { errorReply, startFakeOpenAIServer, textReply, type FakeOpenAIServer } from "../support/fake-openai-server.ts";
import { pristineMemoryStore } from "../support/pristine-brain.ts";
import { tempDir } from "../support/temp.ts";
import { DumpRefused } from "../../core/errors/dump-refused.ts";

let web: Server;
let port = 0;
let llm: FakeOpenAIServer;
const firecrawlCalls: unknown[] = [];

const ARTICLE = `<!doctype html><html><head><title>Bleeding a radiator</title></head><body>
<nav><a href="/">Home</a> <a href="/shop">Shop now</a> <a href="/login">Log in</a></nav>
<article><h1>How to bleed a radiator</h1><p>${"Turn the heating off and let the radiators cool before you start. ".repeat(6)}</p>
<p>Open the bleed valve a quarter turn with the radiator key until water appears, then close it.</p></article>
<footer>Cookie settings · Newsletter signup</footer><script>steal()</script></body></html>`;

beforeAll(async () => {
  llm = await startFakeOpenAIServer();
  web = createServer((req, res) => {
    if (req.url === "/article")
      return void res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(ARTICLE);
    if (req.url === "/to-loopback")
      return void res.writeHead(302, { location: `http://127.0.0.1:${port}/secret` }).end();
    if (req.url === "/to-localhost")
      return void res.writeHead(301, { location: `http://localhost:${port}/secret` }).end();
    if (req.url === "/manual.pdf")
      return void res.writeHead(200, { "content-type": "application/pdf" }).end("%PDF-1.7 ...");
    if (req.url === "/v2/scrape") {
      let raw = "";
      req.on("data", (c) => (raw += c));
      req.on("end", () => {
        firecrawlCalls.push({ auth: req.headers.authorization, body: JSON.parse(raw) });
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            success: true,
            data: { markdown: "# Radiators\n\nBleed them yearly.", metadata: { title: "Radiators" } },
          }),
        );
      });
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" }).end("secret admin page");
  });
  await new Promise<void>((resolve) => web.listen(0, "127.0.0.1", resolve));
  port = (web.address() as AddressInfo).port;
});
afterAll(async () => {
  await llm.stop();
  await new Promise<void>((resolve) => web.close(() => resolve()));
});

/** "public.test" resolves to the local server and is let through by name only; every other name resolves to what the test says. */
function offline(resolveTo: Record<string, string> = {}): CaptureUrlOptions {
  return {
    resolve: async (host) => [{ address: resolveTo[host] ?? "127.0.0.1", family: 4 }],
    allowAddress: (_address, host) => host === "public.test",
    timeoutMs: 5000,
  };
}

describe("URL dumps go through the guarded fetch", () => {
  test("a public page is stored as its article text, without menus, footers or scripts", async () => {
    const capture = await captureUrl(`http://public.test:${port}/article`, {}, offline());
    expect(capture.kind).toBe("url");
    expect(capture.source).toBe(`http://public.test:${port}/article`);
    expect(capture.content).toStartWith("Bleeding a radiator\n\n");
    expect(capture.content).toContain("Open the bleed valve a quarter turn");
    expect(capture.content).not.toContain("Shop now");
    expect(capture.content).not.toContain("Cookie settings");
    expect(capture.content).not.toContain("steal");
  });

  test("a name that resolves to loopback is refused", async () => {
    await expect(
      captureUrl(`http://evil.test:${port}/secret`, {}, offline({ "evil.test": "127.0.0.1" })),
    ).rejects.toThrow(/Refused .*evil\.test resolves to 127\.0\.0\.1, which is loopback.*Nothing was stored/);
  });

  test("a redirect to loopback (by address or by name) is refused after the hop", async () => {
    await expect(captureUrl(`http://public.test:${port}/to-loopback`, {}, offline())).rejects.toThrow(
      /Refused http:\/\/127\.0\.0\.1:\d+\/secret \(redirect from .*public\.test.*\): 127\.0\.0\.1 is loopback/,
    );
    await expect(captureUrl(`http://public.test:${port}/to-localhost`, {}, offline())).rejects.toThrow(
      /localhost is this machine/,
    );
  });

  test("metadata, private and non-http addresses are refused; so is a PDF", async () => {
    await expect(captureUrl("http://169.254.169.254/latest/meta-data/", {}, offline())).rejects.toThrow(/link-local/);
    await expect(captureUrl("http://intranet.test/", {}, offline({ "intranet.test": "10.1.2.3" }))).rejects.toThrow(
      /private/,
    );
    await expect(captureUrl("file:///etc/passwd", {}, offline())).rejects.toThrow(DumpRefused);
    await expect(captureUrl(`http://public.test:${port}/manual.pdf`, {}, offline())).rejects.toThrow(
      /application\/pdf, not text.*Nothing was stored/,
    );
  });

  test("with FIRECRAWL_API_KEY the page comes from Firecrawl; a loopback URL is still refused", async () => {
    const env = { FIRECRAWL_API_KEY: "fc-key", FIRECRAWL_BASE_URL: `http://127.0.0.1:${port}` };
    const capture = await captureUrl("https://example.com/radiators", env);
    expect(capture).toEqual({
      kind: "url",
      source: "https://example.com/radiators",
      content: "Radiators\n\n# Radiators\n\nBleed them yearly.",
    });
    expect(firecrawlCalls.at(-1)).toMatchObject({
      auth: "Bearer fc-key",
      body: { url: "https://example.com/radiators", formats: ["markdown"] },
    });
    const before = firecrawlCalls.length;
    await expect(captureUrl("http://127.0.0.1:8080/admin", env)).rejects.toThrow(/Refused .*loopback/);
    await expect(captureUrl("http://localhost/admin", env)).rejects.toThrow(/this machine/);
    expect(firecrawlCalls.length).toBe(before);
  });
});

// The smallest valid PNG (1×1).
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

describe("photo dumps are read by the vision model", () => {
  const env = () => ({ GROQ_API_KEY: "gsk-test", GROQ_BASE_URL: `${llm.url}/openai/v1` });

  test("a photo with a caption becomes a searchable image note (Groq's vision model, over HTTP)", async () => {
    const store = await pristineMemoryStore();
    try {
      const dir = tempDir();
      writeFileSync(join(dir, "whiteboard.png"), PNG);
      llm.enqueue(textReply("SPRINT 14\nShip the brain by Friday\nDescription: A whiteboard with a sprint plan."));
      const vision = visionFromEnv(env());
      expect(vision?.label).toBe("groq:meta-llama/llama-4-scout-17b-16e-instruct");
      const capture = await captureImage(join(dir, "whiteboard.png"), readFileSync, vision);
      expect(capture).toEqual({
        kind: "image",
        source: "whiteboard.png",
        content: "SPRINT 14\nShip the brain by Friday\nDescription: A whiteboard with a sprint plan.",
        original: { bytes: PNG, mediaType: "image/png" },
      });
      const request = llm.requests.at(-1)!;
      expect(request.body.model).toBe("meta-llama/llama-4-scout-17b-16e-instruct");
      expect(JSON.stringify(request.body.messages)).toContain(`data:image/png;base64,${PNG.toString("base64")}`);

      llm.enqueue(textReply("Receipt: 42.50 EUR"));
      const captioned = await capturePhoto(PNG, "photo.jpg", "lunch receipt for expenses", vision);
      expect(captioned.content).toBe("lunch receipt for expenses\n\nReceipt: 42.50 EUR");

      const brain = new Brain({ store, embedder: null, chat: null });
      const stored = await brain.dump(capture);
      expect(stored.note.kind).toBe("image");
      expect((await brain.ask("what do we ship by friday?")).retrieved[0]?.note.id).toBe(stored.note.id);
    } finally {
      await store.close();
    }
  });

  test("unsupported types, oversize photos, no vision model and a failing one are refused, nothing stored", async () => {
    const vision = visionFromEnv(env());
    await expect(capturePhoto(Buffer.from("%PDF-1.7 stuff"), "manual.pdf", null, vision)).rejects.toThrow(
      /manual\.pdf is a PDF\. Photos are read as JPEG, PNG, WebP or GIF/,
    );
    await expect(capturePhoto(Buffer.from("hello"), "notes.txt", null, vision)).rejects.toThrow(
      /not a supported image/,
    );
    const big = Buffer.concat([PNG, Buffer.alloc(5 * 1024 * 1024)]);
    await expect(capturePhoto(big, "huge.png", null, vision)).rejects.toThrow(
      /huge\.png is 5\.0 MB; photos are read up to 4 MB/,
    );
    await expect(capturePhoto(PNG, "a.png", null, visionFromEnv({}))).rejects.toThrow(
      /needs a vision model: set GROQ_API_KEY/,
    );
    llm.enqueue(errorReply(503, "over capacity"));
    await expect(capturePhoto(PNG, "a.png", null, vision)).rejects.toThrow(/could not read a\.png.*Nothing was stored/);
    await expect(captureImage("/nonexistent/x.png", readFileSync, vision)).rejects.toThrow(
      /Cannot read \/nonexistent\/x\.png: ENOENT/,
    );
  });

  test("OpenRouter's vision model is the fallback when Groq fails", async () => {
    const vision = visionFromEnv({ ...env(), OPENROUTER_API_KEY: "or-key", OPENROUTER_BASE_URL: `${llm.url}/api/v1` })!;
    llm.enqueue(errorReply(503, "groq down"), textReply("Parking: level 3, bay 41"));
    expect(await vision.read(PNG, "image/png", "What does it say?")).toBe("Parking: level 3, bay 41");
    expect(llm.requests.at(-1)!.body.model).toBe("meta-llama/llama-4-scout");
  });
});
