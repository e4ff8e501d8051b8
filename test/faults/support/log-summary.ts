/** How many lines a process logged, by message (its first 60 characters, numbers as #), most frequent first. */
export function logSummary(lines: string[], top = 6): Record<string, number> {
  const counts = new Map<string, number>();
  for (const line of lines) {
    let message = line;
    try {
      message = String((JSON.parse(line) as { msg?: unknown }).msg ?? line);
    } catch {
      // not JSON: the line itself
    }
    const key = message.slice(0, 60).replace(/\d+/g, '#');
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]).slice(0, top));
}
