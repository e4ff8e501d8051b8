/** The benchmarks' HTTP client of `switchboard serve` processes, and the import through the batch endpoint. */

const BATCH = 1000;
export const PARALLEL = Number(process.env.BENCH_IMPORT_PARALLEL ?? 4);

export interface Api {
  post(path: string, body: object | string): Promise<any>;
  put(path: string, body: object): Promise<any>;
  delete(path: string, body: object): Promise<any>;
  get(path: string): Promise<any>;
  /** A GET that may be refused: resolves with the status (a bounded refusal is an answer too). */
  status(path: string): Promise<number>;
}

/** A client of one or more API processes, taking them in turn (they share MariaDB and Redis). */
export function api(bases: string[], token: string): Api {
  let turn = 0;
  const send = (method: string, path: string, body?: object | string) =>
    fetch(`${bases[turn++ % bases.length]}/api/campaign${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: typeof body === 'string' ? body : body ? JSON.stringify(body) : undefined,
    });
  const call = async (method: string, path: string, body?: object | string) => {
    const res = await send(method, path, body);
    const json = await res.json();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    return json;
  };
  return {
    post: (p, b) => call('POST', p, b),
    put: (p, b) => call('PUT', p, b),
    delete: (p, b) => call('DELETE', p, b),
    get: (p) => call('GET', p),
    status: async (p) => {
      const res = await send('GET', p);
      await res.arrayBuffer();
      if (res.status >= 500) throw new Error(`GET ${p}: ${res.status}`);
      return res.status;
    },
  };
}

/**
 * Imports subscribers [from, to) through POST /subscribers/batch, PARALLEL requests at a time. The
 * request bodies are built before the clock starts: the load generator shares the machine's two
 * cores with the server and MariaDB, and a client's JSON building is not the server's throughput.
 */
export async function seed(
  client: Api,
  from: number,
  to: number,
  row: (n: number) => object,
  log: (s: string) => void,
  parallel = PARALLEL,
): Promise<number> {
  const bodies: Array<{ rows: number; json: string }> = [];
  for (let start = from; start < to; start += BATCH) {
    const rows = [];
    for (let n = start; n < Math.min(to, start + BATCH); n++) rows.push(row(n));
    bodies.push({ rows: rows.length, json: JSON.stringify({ subscribers: rows, skip_confirmation: true }) });
  }
  const started = performance.now();
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < bodies.length) {
      const body = bodies[next++];
      const res = await client.post('/subscribers/batch', body.json);
      if (res.data.failed) throw new Error(`batch failed rows: ${JSON.stringify(res.data.errors.slice(0, 3))}`);
      done += body.rows;
      if (done % 100_000 < BATCH) log(`  imported ${from + done}`);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return Math.round((to - from) / ((performance.now() - started) / 1000));
}
