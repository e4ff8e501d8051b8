import { isDatabaseUnavailable } from './errors';

/**
 * `work` run again while the database cannot be reached (isDatabaseUnavailable), after 0.5, 1, 2, 4, then
 * every 5 s, for at most `withinMs`: work done outside it meanwhile (mail SMTP took, a server checked) is
 * recorded once the database is back instead of thrown away and done again. `work` must be a transaction
 * that may run twice (a commit whose answer was lost). Any other error, or the last one past the time, is thrown.
 */
export async function whileDatabaseAway<T>(
  work: () => Promise<T>,
  withinMs: number,
  onRetry?: (err: unknown) => void,
): Promise<T> {
  const until = Date.now() + withinMs;
  for (let delay = 500; ; delay = Math.min(delay * 2, 5_000)) {
    try {
      return await work();
    } catch (err) {
      if (!isDatabaseUnavailable(err) || Date.now() + delay > until) throw err;
      onRetry?.(err);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
