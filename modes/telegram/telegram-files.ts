import { formatBytes } from "../../core/format-bytes.ts";
import type { Api } from "grammy";
import type { TelegramConfig } from "./config.ts";
import { TelegramFileError } from "../../core/errors/telegram-file-error.ts";

/** Telegram lets a bot download files of at most 20 MB (getFile refuses bigger ones). */
export const TELEGRAM_DOWNLOAD_LIMIT = 20 * 1024 * 1024;

/**
 * Downloads a file the owner sent (getFile, then the file endpoint), refusing more
 * than `maxBytes` both from what Telegram declares and from what actually arrives.
 */
export async function downloadTelegramFile(
  api: Api,
  config: TelegramConfig,
  fileId: string,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  const file = await api.getFile(fileId).catch((error: unknown) => {
    throw new TelegramFileError(
      `Telegram would not hand the file over (${error instanceof Error ? error.message.replaceAll(config.token, "…") : String(error)}).`,
    );
  });
  if (!file.file_path) throw new TelegramFileError("Telegram gave no path for the file; send it again.");
  if (file.file_size !== undefined && file.file_size > maxBytes)
    throw new TelegramFileError(`The file is ${formatBytes(file.file_size)}; the limit is ${formatBytes(maxBytes)}.`);
  const url = `${config.apiRoot}/file/bot${config.token}/${file.file_path}`;
  let response: Response;
  try {
    response = await fetch(url, signal ? { signal } : {});
  } catch (error) {
    throw new TelegramFileError(
      `The file could not be downloaded (${error instanceof Error ? error.message.replaceAll(config.token, "…") : "network error"}).`,
    );
  }
  if (!response.ok || !response.body)
    throw new TelegramFileError(`The file could not be downloaded (HTTP ${response.status}).`);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new TelegramFileError(`The file is over the limit of ${formatBytes(maxBytes)}.`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
