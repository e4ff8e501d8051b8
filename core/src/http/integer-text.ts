import type Ajv from 'ajv';
import type { ErrorObject, SchemaValidateFunction } from 'ajv';

/**
 * Path and query values are text that ajv coerces to numbers, and its coercion takes whatever
 * JavaScript's Number() reads as one: `0x10`, `+1`, `01`, ` 1`, `1e3`, and `Infinity` or `1e400`, which
 * then pass `type: integer` and even `maximum`. This keyword, on the object of parameters, runs before
 * `properties` coerces them and refuses an integer parameter that Number() would read as an integer or
 * as an infinity but that is not plain decimal digits without a leading zero (rule `pattern`), and digits
 * beyond what a JavaScript number holds exactly (rule `maximum`); a number parameter that would be read
 * as an infinity (rule `pattern`). A minus sign is let through for `minimum` to refuse; text that is no
 * number at all (`abc`), or no integer (`1.5`), is left to ajv's `type`.
 */
export const INTEGER_TEXT = 'integerText';

const DECIMAL = /^(0|-?[1-9][0-9]*)$/;

type Refusal = Pick<ErrorObject, 'keyword' | 'params' | 'message'>;

const NOT_DECIMAL: Refusal = {
  keyword: 'pattern',
  params: { pattern: DECIMAL.source },
  message: 'must be an integer written in decimal digits, without a leading zero',
};
const NOT_EXACT: Refusal = {
  keyword: 'maximum',
  params: { comparison: '<=', limit: Number.MAX_SAFE_INTEGER },
  message: `must be <= ${Number.MAX_SAFE_INTEGER}`,
};
const NOT_FINITE: Refusal = { keyword: 'pattern', params: {}, message: 'must be a finite number' };

/** Why ajv must not coerce this text to the parameter's integer, or null to let ajv decide. */
function integerRefusal(text: unknown): Refusal | null {
  if (typeof text !== 'string' || text === '') return null;
  const n = Number(text);
  if (Number.isNaN(n) || (Number.isFinite(n) && !Number.isInteger(n))) return null;
  if (!DECIMAL.test(text)) return NOT_DECIMAL;
  return Number.isSafeInteger(n) ? null : NOT_EXACT;
}

const numberRefusal = (text: unknown): Refusal | null =>
  typeof text === 'string' && Math.abs(Number(text)) === Infinity ? NOT_FINITE : null;

type PropertySchema = { type?: string | string[]; items?: PropertySchema };

/** How the texts of a parameter of this schema are checked (its items' schema for an array), if at all. */
const refusalFor = (schema: PropertySchema | undefined): ((text: unknown) => Refusal | null) | null => {
  if (!schema) return null;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('integer')) return integerRefusal;
  if (types.includes('number')) return numberRefusal;
  return types.includes('array') ? refusalFor(schema.items) : null;
};

const checkIntegerText: SchemaValidateFunction = (_enabled, data, parentSchema) => {
  const properties = (parentSchema as { properties?: Record<string, PropertySchema> }).properties ?? {};
  const errors: Partial<ErrorObject>[] = [];
  for (const [name, value] of Object.entries(data as Record<string, unknown>)) {
    const refusal = refusalFor(properties[name]);
    const refused = refusal && (Array.isArray(value) ? value : [value]).map(refusal).find(Boolean);
    if (refused) {
      errors.push({ instancePath: `/${name}`, ...refused });
      break;
    }
  }
  checkIntegerText.errors = errors;
  return errors.length === 0;
};

export function addIntegerTextKeyword(ajv: Ajv): void {
  ajv.addKeyword({
    keyword: INTEGER_TEXT,
    type: 'object',
    schemaType: 'boolean',
    before: 'properties',
    errors: true,
    validate: checkIntegerText,
  });
}
