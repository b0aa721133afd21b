import { createGroq } from "@ai-sdk/groq";
import { createOpenAI } from "@ai-sdk/openai";
import { APICallError, NoTranscriptGeneratedError, transcribe, type TranscriptionModel } from "ai";
import { TranscriptionError } from "../core/errors/transcription-error.ts";

/** Groq's Whisper model when GROQ_TRANSCRIBE_MODEL is not set: fast, and priced per hour of audio. */
const DEFAULT_GROQ_TRANSCRIBE_MODEL = "whisper-large-v3-turbo";
/** The local server's model when LOCAL_TRANSCRIBE_MODEL is not set (the name most OpenAI-compatible servers answer to). */
const DEFAULT_LOCAL_TRANSCRIBE_MODEL = "whisper-1";

/** What a transcription gave: the text (empty when nothing was heard), and which provider gave it. */
interface Transcript {
  text: string;
  /** `provider:model`, e.g. `groq:whisper-large-v3-turbo`. */
  label: string;
  /** The audio's length as the provider measured it, when it says. */
  durationSeconds?: number;
}

/** Turns audio into text through a chain of providers, primary first. */
export interface Transcriber {
  labels: string[];
  /** The AI SDK tells the audio's type from its bytes (OGG/Opus, MP3, WAV, M4A…). */
  transcribe(audio: Uint8Array, signal?: AbortSignal): Promise<Transcript>;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The transcription chain from the environment: Groq's Whisper (`GROQ_API_KEY`,
 * `GROQ_BASE_URL`, `GROQ_TRANSCRIBE_MODEL`) first, then a local OpenAI-compatible
 * `/audio/transcriptions` server (`LOCAL_TRANSCRIBE_BASE_URL`, `LOCAL_TRANSCRIBE_MODEL`)
 * as its fallback; null when neither is configured.
 */
export function resolveTranscriber(env: Env, fetchImpl?: typeof fetch): Transcriber | null {
  const chain: { label: string; model: TranscriptionModel }[] = [];
  const groqKey = read(env, "GROQ_API_KEY");
  if (groqKey) {
    const id = read(env, "GROQ_TRANSCRIBE_MODEL") ?? DEFAULT_GROQ_TRANSCRIBE_MODEL;
    chain.push({
      label: `groq:${id}`,
      model: createGroq({ apiKey: groqKey, baseURL: read(env, "GROQ_BASE_URL"), fetch: fetchImpl }).transcription(id),
    });
  }
  const localBase = read(env, "LOCAL_TRANSCRIBE_BASE_URL");
  if (localBase) {
    const id = read(env, "LOCAL_TRANSCRIBE_MODEL") ?? DEFAULT_LOCAL_TRANSCRIBE_MODEL;
    // A placeholder key keeps the client from reading OPENAI_API_KEY and sending it to a local server.
    chain.push({
      label: `local:${id}`,
      model: createOpenAI({ apiKey: "local", baseURL: localBase, fetch: fetchImpl }).transcription(id),
    });
  }
  if (chain.length === 0) return null;
  return {
    labels: chain.map((c) => c.label),
    async transcribe(audio, signal) {
      const failures: string[] = [];
      for (const { label, model } of chain) {
        try {
          const result = await transcribe({ model, audio, maxRetries: 1, ...(signal ? { abortSignal: signal } : {}) });
          return {
            text: result.text.trim(),
            label,
            ...(result.durationInSeconds !== undefined ? { durationSeconds: result.durationInSeconds } : {}),
          };
        } catch (error) {
          // Silence is an answer, not a failure: another provider would hear nothing either.
          if (NoTranscriptGeneratedError.isInstance(error)) return { text: "", label };
          if (signal?.aborted) throw error;
          failures.push(`${label}: ${describe(error)}`);
        }
      }
      throw new TranscriptionError(`The voice note could not be transcribed (${failures.join("; ")}).`);
    },
  };
}

function describe(error: unknown): string {
  if (APICallError.isInstance(error)) return `HTTP ${error.statusCode ?? "?"} ${error.message.slice(0, 200)}`;
  return error instanceof Error ? error.message.slice(0, 200) : String(error);
}

function read(env: Env, name: string): string | undefined {
  if (!Object.hasOwn(env, name)) return undefined;
  const value = env[name]?.trim();
  return value ? value : undefined;
}
