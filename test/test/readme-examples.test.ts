import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '@switchboard/core';
import { waitFor } from '@switchboard/core/testing';
import { exitOf, freePort, repoRoot } from '../src/cli';

/**
 * Every example of README.md is run or checked here (issue 23): its shell session by bash against the
 * server `npm start` starts, its commands against package.json, its configuration file by the loader.
 * An example of another kind, or a command of the session without an expected answer below, fails.
 */

interface Block {
  lang: string;
  text: string;
}

const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');

/** The fenced code blocks of a Markdown text. */
function fencedBlocks(markdown: string): Block[] {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1], text: m[2] }));
}

/** A shell block's commands, one a line; a line ending in `\` goes on on the next. */
const commandsOf = (text: string) =>
  text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);

/** A command without its trailing comment. */
const withoutComment = (command: string) => command.replace(/\s+#.*$/, '');

const blocks = fencedBlocks(readme);
/** The block of "Two commands": `npm install && npm start` and `npm test`. */
const isTwoCommands = (block: Block) => block.lang === 'sh' && /^npm install && npm start\b/.test(block.text);
const sessionCommands = blocks.filter((b) => b.lang === 'sh' && !isTwoCommands(b)).flatMap((b) => commandsOf(b.text));

const json = (output: string) => JSON.parse(output) as any;

/** What each command of the session answers on a fresh data folder, the organization's id being 1. */
const ANSWERS: Array<{ command: RegExp; check: (stdout: string) => void }> = [
  {
    command: /^npx switchboard org:create --name /,
    check: (stdout) => expect(stdout.trim()).to.equal('1'),
  },
  {
    // The token goes into $TOKEN, which the next commands use (and the script prints at its end).
    command: /^export TOKEN=\$\(npx switchboard token:create --org 1 /,
    check: (stdout) => expect(stdout).to.equal(''),
  },
  {
    command: /^curl .* -d '\{"name":"Ada Lovelace".*\/api\/v1\/users$/,
    check: (stdout) =>
      expect(json(stdout)).to.nested.include({
        success: true,
        'data.name': 'Ada Lovelace',
        'data.email': 'ada@example.com',
      }),
  },
  {
    command: /^curl .* -d '\{"email":"ada@example.com".*\/api\/campaign\/subscribers$/,
    check: (stdout) =>
      expect(json(stdout)).to.nested.include({
        success: true,
        'data.email': 'ada@example.com',
        'data.status': 'active',
      }),
  },
  {
    command: /^curl .*\/api\/campaign\/subscribers\?search=name:ada%20meta\.plan:pro'$/,
    check: (stdout) => {
      const body = json(stdout);
      expect(body.success).to.equal(true);
      expect(body.data.map((s: { email: string }) => s.email)).to.deep.equal(['ada@example.com']);
      expect(body.data[0]).to.include({ first_name: 'Ada' });
      expect(body.data[0].meta_data).to.deep.equal({ plan: 'pro' });
      expect(body.pagination).to.include({ total: 1 });
    },
  },
  {
    command: /^curl .* -d '\{"title":"This engine".*\/api\/servermonitor\/servers$/,
    check: (stdout) =>
      expect(json(stdout)).to.nested.include({ success: true, 'data.title': 'This engine', 'data.state': 'pending' }),
  },
  {
    command: /^npx switchboard servermonitor:servers --down\b/,
    check: (stdout) => expect(stdout).to.equal('no down servers\n'),
  },
  {
    command:
      /^echo "http:\/\/127\.0\.0\.1:\d+\/api\/servermonitor\/dashboard\/\$\(npx switchboard servermonitor:key\)"$/,
    check: (stdout) =>
      expect(stdout).to.match(/^http:\/\/127\.0\.0\.1:\d+\/api\/servermonitor\/dashboard\/[0-9a-f]{48}\n$/),
  },
];

/** Runs a bash script in the repository, as a reader would in a terminal there. */
function bash(script: string, env: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile('bash', ['-c', script], { cwd: repoRoot, env, timeout: 60_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stdout}\n${stderr}`)) : resolve({ stdout, stderr }),
    );
  });
}

describe("README's examples", function () {
  // The session takes about 3 s (the server's start and migrations, two npx runs). Its own limits (20 s for the
  // server to start, 30 s for the script) fail it first, so that `finally` stops the server.
  // The first session starts a server and runs a dozen commands: 20.6 s under a slow host's .ci/run.
  this.timeout(120_000);

  it('are each run or checked by this test: shell commands and the configuration file, nothing else', () => {
    expect(blocks.filter((b) => !['sh', 'json'].includes(b.lang))).to.deep.equal([]);
    expect(blocks.filter(isTwoCommands)).to.have.length(1);
    expect(blocks.filter((b) => b.lang === 'json')).to.have.length.above(0);
    expect(sessionCommands).to.have.length.above(0);
    // Each command has exactly one expected answer, and each answer is of a command README shows.
    for (const command of sessionCommands) {
      expect(
        ANSWERS.filter((a) => a.command.test(command)),
        command,
      ).to.have.length(1);
    }
    for (const answer of ANSWERS) {
      expect(
        sessionCommands.filter((c) => answer.command.test(c)),
        String(answer.command),
      ).to.have.length(1);
    }
  });

  it('"Two commands" are the scripts of package.json', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
    expect(commandsOf(blocks.find(isTwoCommands)!.text).map(withoutComment)).to.deep.equal([
      'npm install && npm start',
      'npm test',
    ]);
    expect(pkg.scripts.prepare).to.equal('tsc -b'); // npm install builds
    expect(pkg.scripts.start).to.match(/^tsc -b && node .*bin\/switchboard\.js serve$/);
    expect(pkg.scripts.test).to.match(/\bmocha$/);
  });

  it('the configuration file example is one the loader takes', () => {
    const examples = blocks.filter((b) => b.lang === 'json');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-readme-config-'));
    try {
      for (const [i, example] of examples.entries()) {
        const file = path.join(dir, `switchboard-${i}.json`);
        fs.writeFileSync(file, example.text);
        const config = loadConfig({ env: {}, file });
        expect(config.plugins.map((p) => p.id)).to.deep.equal(Object.keys(JSON.parse(example.text).plugins));
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the first session, run by bash against what `npm start` serves, answers as README says: the search finds Ada', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-readme-'));
    const port = await freePort();
    // The embedded default whatever this shell has set: an empty variable counts as unset.
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' };
    for (const name of ['HOST', 'DATABASE_URL', 'REDIS_URL', 'PLUGINS', 'APP_ENV', 'PUBLIC_URL', 'SMTP_URL'])
      env[name] = '';
    for (const name of ['SWITCHBOARD_CONFIG', 'APP_KEY', 'TOKEN']) delete env[name];

    // `npm start` is `tsc -b && node ... serve`: npm test has just built, so run what follows the build.
    const start = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).scripts.start as string;
    const serve = start.replace(/^tsc -b && /, '');
    const server = spawn('bash', ['-c', `exec ${serve}`], { cwd: repoRoot, env });
    let banner = '';
    server.stdout.on('data', (chunk) => (banner += chunk));
    server.stderr.on('data', (chunk) => (banner += chunk));
    try {
      await waitFor(() => banner.includes('Switchboard is serving'), 40_000);
      // The session starts with the command the server's banner suggests.
      expect(banner).to.contain(withoutComment(sessionCommands[0]));

      // README's address is the default port; this server listens on a free one.
      const commands = sessionCommands.map((c) => c.replaceAll('http://127.0.0.1:3000/', `http://127.0.0.1:${port}/`));
      const script = [
        'set -euo pipefail',
        ...commands.flatMap((command, i) => [`printf '\\n@@step ${i}@@\\n'`, command]),
        `printf '\\n@@token@@\\n%s' "\${TOKEN:-}"`,
      ].join('\n');
      const { stdout, stderr } = await bash(script, env);
      const messages = stderr
        .split('\n')
        .filter((line) => !/% Total|Dload|--:--/.test(line)) // curl's progress meter
        .join('\n');

      const [before, ...steps] = stdout.split(/\n@@step \d+@@\n/);
      expect(before).to.equal('');
      const [lastStep, token] = steps.pop()!.split('\n@@token@@\n');
      steps.push(lastStep);
      expect(steps).to.have.length(commands.length);
      expect(token, 'the token in $TOKEN').to.match(/^sb_/);
      sessionCommands.forEach((command, i) => {
        const answer = ANSWERS.find((a) => a.command.test(command))!;
        try {
          answer.check(steps[i]);
        } catch (err) {
          (err as Error).message = `${command}\nanswered: ${steps[i]}\n${(err as Error).message}\n${messages}`;
          throw err;
        }
      });
    } finally {
      server.kill('SIGTERM');
      expect(await exitOf(server)).to.equal(0);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
