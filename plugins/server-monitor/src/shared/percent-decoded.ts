/** `text` with its percent-escapes decoded, or null when they spell no UTF-8 text (`%`, `%ZZ`, `%E0%A4%A`). */
export function percentDecoded(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}
