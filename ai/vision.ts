import { createGroq } from "@ai-sdk/groq";
import { APICallError, generateText } from "ai";

/** Groq's model that turns a photo into text when GROQ_VISION_MODEL is not set (A3). */
export const DEFAULT_GROQ_VISION_MODEL = "meta-llama/llama-4-scout-17b-16e-instruct";

/** Model families that read images; anything else gets a description of the photo instead. */
const SEES_IMAGES = /llama-4|vision|vl\b|-vl-|gpt-4o|gpt-4\.1|gpt-5|claude|gemini|pixtral|llava|gemma-3/i;

/** Whether a model (by its `provider:model` label) takes images in its prompt. */
export function seesImages(label: string): boolean {
  return SEES_IMAGES.test(label);
}

/** The vision model could not describe the photo; the message says why and what to do. */
export class VisionError extends Error {
  override name = "VisionError";
}

type Env = Readonly<Record<string, string | undefined>>;

/** What the vision model saw, and which model it was. */
export interface ImageDescription {
  text: string;
  label: string;
}

/**
 * Describes a photo through Groq's vision model (`GROQ_VISION_MODEL`) for a model
 * that cannot see it: everything legible is transcribed (a screenshot's error text
 * matters more than its colours). Throws VisionError without GROQ_API_KEY or when the
 * provider refuses the image.
 */
export async function describeImage(env: Env, image: Uint8Array, mediaType: string, caption: string, signal?: AbortSignal, fetchImpl?: typeof fetch): Promise<ImageDescription> {
  const key = env.GROQ_API_KEY?.trim();
  if (!key) throw new VisionError("The model cannot see images and no vision model is configured: set GROQ_API_KEY (the photo is described by GROQ_VISION_MODEL).");
  const id = env.GROQ_VISION_MODEL?.trim() || DEFAULT_GROQ_VISION_MODEL;
  const model = createGroq({ apiKey: key, baseURL: env.GROQ_BASE_URL?.trim() || undefined, fetch: fetchImpl })(id);
  try {
    const result = await generateText({
      model,
      maxRetries: 1,
      ...(signal ? { abortSignal: signal } : {}),
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: `A developer sent this screenshot with the request: "${caption}". Transcribe every legible piece of text exactly (errors, stack traces, code, file names), then describe briefly what else it shows that matters for the request.` },
            { type: "file", data: image, mediaType },
          ],
        },
      ],
    });
    const text = result.text.trim();
    if (!text) throw new VisionError(`The vision model (groq:${id}) said nothing about the photo; send it again or describe it in words.`);
    return { text, label: `groq:${id}` };
  } catch (error) {
    if (error instanceof VisionError) throw error;
    const why = APICallError.isInstance(error) ? `HTTP ${error.statusCode ?? "?"}: ${error.message.slice(0, 200)}` : error instanceof Error ? error.message.slice(0, 200) : String(error);
    throw new VisionError(`The vision model (groq:${id}) could not read the photo (${why}). Send a PNG or JPEG screenshot, or describe it in words.`);
  }
}
