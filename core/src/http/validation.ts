import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { AppError } from './errors';
import { addIntegerTextKeyword, INTEGER_TEXT } from './integer-text';
import { EMAIL_PATTERN } from '../schemas/common';
import { compileOnce } from '../schemas/compile-once';

/** Patterns that spell out a format (for validators other than ajv): a mismatch reads as that format's. */
const FORMAT_OF_PATTERN: Record<string, string> = { [EMAIL_PATTERN]: 'email' };

/**
 * A schema's annotation naming the schema its value is checked against by the handler, one value at a
 * time, instead of by the request's validation (a batch's rows: a bad row fails alone). The OpenAPI
 * document publishes that schema in its place, so a client is typed by what it must send.
 */
export const CHECKED_ALONE = 'x-checked-alone';

function newAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: false,
    useDefaults: true,
    // Unknown body members are dropped, not refused: clients may send back what they read.
    removeAdditional: true,
    coerceTypes: coerce ? 'array' : false,
    strict: true,
  });
  addFormats(ajv);
  ajv.addVocabulary(['example', CHECKED_ALONE]);
  return ajv;
}

const bodyAjv = newAjv(false);
/** Responses are checked as they are: nothing dropped, defaulted or coerced. */
const responseAjv = new Ajv({ allErrors: false, strict: true });
addFormats(responseAjv);
responseAjv.addVocabulary(['example']);
/** Path and query values arrive as text, so they are coerced to the schema's types. */
const textAjv = newAjv(true);
addIntegerTextKeyword(textAjv);

const fieldName = (path: string) => path.replace(/^\//, '').replace(/\//g, '.');

export function toValidationError(error: ErrorObject): AppError {
  const base = fieldName(error.instancePath);
  if (error.keyword === 'required') {
    const field = base ? `${base}.${error.params.missingProperty}` : String(error.params.missingProperty);
    return new AppError('VALIDATION_ERROR', `${field} is required`, { field, rule: 'required' });
  }
  const field = base || 'body';
  const format = error.keyword === 'pattern' ? FORMAT_OF_PATTERN[String(error.params.pattern)] : undefined;
  if (format) return new AppError('VALIDATION_ERROR', `${field} must be a valid ${format}`, { field, rule: 'format' });
  const message =
    error.keyword === 'format'
      ? `${field} must be a valid ${error.params.format}`
      : `${field} ${error.message ?? 'is invalid'}`;
  return new AppError('VALIDATION_ERROR', message, { field, rule: error.keyword });
}

export type Validator = <T>(value: unknown) => T;

export function compileValidator(schema: object, kind: 'body' | 'text'): Validator {
  const validate: ValidateFunction =
    kind === 'body' ? compileOnce(bodyAjv, schema) : compileOnce(textAjv, { ...schema, [INTEGER_TEXT]: true });
  const minProperties = (schema as { minProperties?: number }).minProperties;
  return <T>(value: unknown): T => {
    if (!validate(value)) throw toValidationError(validate.errors![0]);
    // ajv counts members before it drops the unknown ones: {"typo": 1} must not pass as a change.
    if (minProperties && Object.keys(value as object).length < minProperties) {
      throw new AppError('VALIDATION_ERROR', `body must name at least ${minProperties} known field`, {
        field: 'body',
        rule: 'minProperties',
      });
    }
    return value as T;
  };
}

/**
 * The schema with every object that lists its properties closed to others: a member the route sends
 * that its document does not name is drift too.
 */
function closedObjects(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closedObjects);
  if (typeof schema !== 'object' || schema === null) return schema;
  const copy: Record<string, unknown> = Object.fromEntries(
    Object.entries(schema).map(([k, v]) => [k, closedObjects(v)]),
  );
  if ('properties' in copy && !('additionalProperties' in copy) && !('patternProperties' in copy))
    copy.additionalProperties = false;
  return copy;
}

/** Throws (a bug: the route sends what its OpenAPI document does not say) when a body fails its schema. */
export function compileResponseCheck(schema: object, route: string): (body: unknown) => void {
  const validate = compileOnce(responseAjv, closedObjects(schema) as object);
  return (body) => {
    if (validate(body)) return;
    const error = validate.errors![0];
    throw new Error(
      `The response of ${route} does not match its schema: ${error.instancePath || 'body'} ${error.message}`,
    );
  };
}
