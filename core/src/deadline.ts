/**
 * The work's result, or an error saying `message` once `ms` have passed without one (the work itself goes
 * on: node-redis, for one, retries a first connection and waits in its offline queue forever).
 */
export async function withinDeadline<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
