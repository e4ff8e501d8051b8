/** A method made to meet a database away: its first calls fail as mysql2 reports a refused connection. */
export interface DatabaseAway {
  /** Calls refused so far. */
  readonly refused: number;
  restore(): void;
}

/** `target[method]` (a prototype's, say) rejects its first `times` calls with a fatal ECONNREFUSED, then works. */
export function databaseAwayFor<T extends object>(target: T, method: keyof T & string, times: number): DatabaseAway {
  const original = target[method] as unknown as (...args: unknown[]) => Promise<unknown>;
  const state = { refused: 0 };
  (target as Record<string, unknown>)[method] = function (this: unknown, ...args: unknown[]) {
    if (state.refused >= times) return original.apply(this, args);
    state.refused++;
    return Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), { fatal: true }));
  };
  return {
    get refused() {
      return state.refused;
    },
    restore: () => {
      (target as Record<string, unknown>)[method] = original;
    },
  };
}
