import fs from 'node:fs';
import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { parse } from 'csv-parse';
import { Clock, OrganizationService, SecretBox, SERVICES } from '@switchboard/core';
import { InputError } from '../shared/cli';
import { MONITOR_ADDRESSES, MonitorAddresses } from '../shared/addresses';
import { endpointProblem, requestedUrl, sealEndpoint, StoredEndpoint } from '../shared/endpoints';

export interface ImportOptions {
  dryRun?: boolean;
  /** Every row goes to this organization instead of the one its organization_name names. */
  organizationId?: number;
  /** Told the bytes read so far (a progress bar). */
  onProgress?(bytes: number): void;
}

export interface RowError {
  line: number;
  message: string;
}

export interface ImportResult {
  imported: number;
  organizations_created: number;
  errors: number;
  /** The first MAX_LISTED errors, each with the line its row ends on. */
  error_rows: RowError[];
  dry_run: boolean;
}

export class ImportFileError extends InputError {}

const REQUIRED = ['title', 'endpoint', 'organization_name'] as const;
const INSERT_BATCH = 500;
const MAX_LISTED = 1_000;

/**
 * `servermonitor:import FILE`: a CSV of servers (header row; title, endpoint and organization_name
 * required, status and notes optional), read as a stream. An organization named but not there is
 * created (plan free, subscription active). Bad rows are counted with their line and skipped; a
 * duplicate is an endpoint the organization has already, in the database or earlier in the file
 * (compared as stored: the password masked). An endpoint's password is sealed (shared/endpoints.ts).
 * Rows are written 500 at a time, once the whole file was read as CSV.
 */
@injectable()
export class ServerImporter {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(OrganizationService) private readonly organizations: OrganizationService,
    @inject(SERVICES.SecretBox) private readonly secrets: SecretBox,
    @inject(MONITOR_ADDRESSES) private readonly addresses: MonitorAddresses,
  ) {}

  async import(file: string, options: ImportOptions = {}): Promise<ImportResult> {
    const result: ImportResult = {
      imported: 0,
      organizations_created: 0,
      errors: 0,
      error_rows: [],
      dry_run: !!options.dryRun,
    };
    const fail = (line: number, message: string) => {
      result.errors++;
      if (result.error_rows.length < MAX_LISTED) result.error_rows.push({ line, message });
    };
    const fixed = options.organizationId !== undefined ? await this.organizations.get(options.organizationId) : null;
    const orgIds = new Map<string, number | null>();
    const endpoints = new Map<number | string, Set<string>>();
    const known = async (org: number | string) => {
      let set = endpoints.get(org);
      if (!set) {
        // Keyed by the URL each requests (its secrets opened): endpoints shown alike may be other servers.
        const rows: StoredEndpoint[] =
          typeof org === 'number'
            ? await this.knex('monitor_servers').where({ organization_id: org }).select('endpoint', 'endpoint_secret')
            : [];
        set = new Set(rows.map((row) => requestedUrl(row, this.secrets) ?? `unopened ${row.endpoint}`));
        endpoints.set(org, set);
      }
      return set;
    };
    let pending: Array<Record<string, unknown>> = [];
    const flush = async () => {
      if (!pending.length || options.dryRun) return void (pending = []);
      const rows = pending;
      pending = [];
      await this.knex.transaction(async (trx) => {
        for (let i = 0; i < rows.length; i += INSERT_BATCH)
          await trx('monitor_servers').insert(rows.slice(i, i + INSERT_BATCH));
      });
    };

    // A folder or a missing file is the operator's mistake, said as such (a read stream's error was thrown
    // past the parser, a stack trace).
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat) throw new ImportFileError(`${file} does not exist`);
    if (!stat.isFile()) throw new ImportFileError(`${file} is not a file`);
    // A file that is not CSV throughout changes nothing: read once to its end before any row is written
    // (a line not CSV half way left the rows before it imported, with no counts; session 34).
    if (!options.dryRun) for await (const record of csvRecords(file)) void record;
    const records = csvRecords(file, options.onProgress);
    const checkHeader = (names: string[]) => {
      const missing = REQUIRED.filter((c) => !names.includes(c));
      if (missing.length) throw new ImportFileError(`The header row lacks the column(s) ${missing.join(', ')}`);
    };
    let checkedHeader = false;
    for await (const { record, line } of records) {
      if (!checkedHeader) {
        checkHeader(records.header() ?? Object.keys(record));
        checkedHeader = true;
      }
      const title = record.title ?? '';
      const endpoint = record.endpoint ?? '';
      const problem = endpointProblem(endpoint, this.addresses);
      const orgName = (record.organization_name ?? '').slice(0, 191);
      if (!title) fail(line, 'title: missing');
      else if (title.length > 191) fail(line, 'title: longer than 191 characters');
      else if (problem) fail(line, `endpoint: ${problem}`);
      else if (options.organizationId !== undefined && !fixed)
        fail(line, `organization ${options.organizationId} (--organization) not found`);
      else if (!fixed && !orgName) fail(line, 'organization_name: missing');
      else if ((record.status ?? '').length > 32) fail(line, 'status: longer than 32 characters');
      else {
        const org = fixed ? fixed.id : await this.organizationOf(orgName, orgIds, result, options.dryRun);
        const seen = await known(org);
        const sealed = sealEndpoint(endpoint, this.secrets);
        const url = requestedUrl(sealed, this.secrets)!;
        if (seen.has(url)) fail(line, `duplicate: ${sealed.endpoint} is already a server of this organization`);
        else {
          seen.add(url);
          result.imported++;
          const now = this.clock.now();
          if (typeof org === 'number')
            pending.push({
              organization_id: org,
              title,
              ...sealed,
              status: record.status || null,
              notes: record.notes || null,
              created_at: now,
              updated_at: now,
            });
          if (pending.length >= INSERT_BATCH * 4) await flush();
        }
      }
    }
    const header = records.header();
    if (!checkedHeader && records.bytes() === 0)
      throw new ImportFileError('The file is empty: a header row is required');
    // A header and no record: its columns are checked all the same.
    if (!checkedHeader && header) checkHeader(header);
    await flush();
    return result;
  }

  /** The organization of that name, created when there is none (a dry run only counts it, by name). */
  private async organizationOf(
    name: string,
    cache: Map<string, number | null>,
    result: ImportResult,
    dryRun?: boolean,
  ): Promise<number | string> {
    if (cache.has(name)) return cache.get(name) ?? name;
    const found = await this.organizations.findByName(name);
    let id: number | null = found ? found.id : null;
    if (!found) {
      result.organizations_created++;
      if (!dryRun) id = (await this.organizations.create({ name, plan: 'free', subscriptionStatus: 'active' })).id;
    }
    cache.set(name, id);
    return id ?? name;
  }
}

/** A CSV file's records with the line each ends on, its header as read, and the bytes read so far. */
interface CsvRecords extends AsyncIterable<{ record: Record<string, string>; line: number }> {
  /** The header row, known once read: also when no record follows it. */
  header(): string[] | undefined;
  bytes(): number;
}

/**
 * The file's records. A quote inside a field not quoted is kept as written (a hand-edited `Big "blue" box`
 * was a fatal error); rows of delimiters alone (a spreadsheet's trailing `,,`) are skipped like empty lines.
 * Not CSV is an ImportFileError naming the line.
 */
function csvRecords(file: string, onProgress?: (bytes: number) => void): CsvRecords {
  let header: string[] | undefined;
  let bytes = 0;
  return {
    header: () => header,
    bytes: () => bytes,
    async *[Symbol.asyncIterator]() {
      const input = fs.createReadStream(file);
      input.on('data', (chunk) => {
        bytes += chunk.length;
        onProgress?.(bytes);
      });
      const parser = input.pipe(
        parse({
          columns: (names: string[]) => (header = names),
          info: true,
          skip_empty_lines: true,
          skip_records_with_empty_values: true,
          relax_column_count: true,
          relax_quotes: true,
          trim: true,
          bom: true,
        }),
      );
      try {
        for await (const { record, info } of parser as AsyncIterable<{
          record: Record<string, string>;
          info: { lines: number };
        }>)
          yield { record, line: info.lines };
      } catch (err) {
        const e = err as Error & { lines?: number; code?: string };
        if (e.code?.startsWith('CSV_'))
          throw new ImportFileError(`The file is not valid CSV (line ${e.lines}): ${e.message}`);
        throw err;
      } finally {
        input.destroy();
      }
    },
  };
}
