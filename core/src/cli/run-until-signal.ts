import type { Engine } from '../engine/engine';

/**
 * Keeps the process alive until SIGTERM/SIGINT, then shuts the engine down gracefully. Call it before the
 * process says it is up: whoever waits for that line may signal at once, and a signal that finds no
 * handler ends the process by Node's default, with no graceful close (a flaky test's exit by signal).
 */
export function runUntilSignal(engine: Engine): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      engine.logger.info({ signal }, 'shutting down');
      try {
        await engine.close();
      } catch (err) {
        engine.logger.error({ err }, 'error during shutdown');
        process.exitCode = 1;
      }
      resolve();
    };
    process.once('SIGTERM', () => void stop('SIGTERM'));
    process.once('SIGINT', () => void stop('SIGINT'));
  });
}
