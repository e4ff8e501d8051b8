import type { Shape } from '../http/api-registry';
import { toBool, toInt, toIso, toIsoRequired, toOneOf, toText } from './values';

type Row = Record<string, unknown>;
type Read = (value: unknown) => unknown;

interface FieldSchema {
  type?: string | readonly string[];
  enum?: readonly string[];
  format?: string;
}

/** How one field of a response schema is read from its column, by the field's JSON type. */
function readerOf(name: string, field: FieldSchema): Read {
  const types = field.type === undefined ? [] : typeof field.type === 'string' ? [field.type] : field.type;
  const nullable = types.includes('null');
  let read: Read;
  if (field.enum) read = (value) => toOneOf(value, field.enum!);
  else if (field.format === 'date-time') return nullable ? toIso : toIsoRequired;
  else if (types.includes('integer')) read = toInt;
  else if (types.includes('number')) read = Number;
  else if (types.includes('boolean')) read = toBool;
  else if (types.includes('string')) read = toText;
  else throw new Error(`rowMapper: no column reader for field "${name}"; compute it instead`);
  return nullable ? (value) => (value === null || value === undefined ? null : read(value)) : read;
}

export interface RowMapper<T> {
  (row: Row): T;
  /** The columns it reads: every field of the schema that is not computed. */
  readonly columns: string[];
}

/**
 * A mapper from a row to the object a response schema describes: each field is read from the column of
 * its name by its type (integer, text, boolean, timestamp, enum, each nullable or not), so the schema
 * is the one definition of the object (and of the columns to select). `computed` gives the fields that are
 * not a column as such.
 */
export function rowMapper<S extends { properties: Record<string, object> }>(
  schema: S,
  computed: Partial<Record<keyof S['properties'], (row: Row) => unknown>> = {},
): RowMapper<Shape<S>> {
  const fields = Object.entries(schema.properties).map(([name, field]): [string, (row: Row) => unknown] => {
    const compute = (computed as Record<string, ((row: Row) => unknown) | undefined>)[name];
    if (compute) return [name, compute];
    const read = readerOf(name, field as FieldSchema);
    return [name, (row) => read(row[name])];
  });
  const map = (row: Row) => {
    const out: Row = {};
    for (const [name, value] of fields) out[name] = value(row);
    return out as Shape<S>;
  };
  const columns = Object.keys(schema.properties).filter((name) => !(name in computed));
  return Object.assign(map, { columns });
}
