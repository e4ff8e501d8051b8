import 'reflect-metadata';
import { benchmarks } from './registry';
import { runJson } from '../src/cli';
import { serveSwitchboard, workerSwitchboard } from './serve';

/** `npm run bench -- NAME [--quick]`: runs one benchmark; its last output line is one JSON object. */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const full = args.includes('--full');
  const name = args.find((a) => !a.startsWith('--'));
  if (!name || !(name in benchmarks)) {
    process.stderr.write(`usage: npm run bench -- <${Object.keys(benchmarks).join('|')}> [--quick|--full]\n`);
    process.exitCode = 2;
    return;
  }
  const result = await benchmarks[name]({
    quick,
    full,
    log: (line) => process.stderr.write(`${line}\n`),
    serve: serveSwitchboard,
    worker: workerSwitchboard,
    // A command a benchmark runs (an index compaction at a million rows, say) may take minutes.
    command: (commandArgs, env) => runJson(commandArgs, env, 30 * 60_000),
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exitCode = 1;
});
