/**
 * The work's result, or an error saying `late` (or the error it makes) once `ms` have passed without one
 * (the work itself goes on: node-redis, for one, retries a first connection and waits in its offline queue
 * forever).
 */
export async function withinDeadline<T>(work: Promise<T>, ms: number, late: string | (() => Error)): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(typeof late === 'string' ? new Error(late) : late()), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
