import type Ajv from 'ajv';
import type { ErrorObject, SchemaValidateFunction } from 'ajv';

/**
 * Path and query values are text that ajv coerces to numbers, and its coercion takes whatever
 * JavaScript's Number() reads as one: `0x10`, `+1`, `01`, ` 1`, `1e3`. This keyword, on the object of
 * parameters, runs before `properties` coerces them and refuses (rule `pattern`) an integer parameter
 * that Number() would read as an integer but that is not plain decimal digits without a leading zero.
 * A minus sign is let through for `minimum` to refuse; text that is no integer at all (`abc`, `1.5`)
 * is left to ajv's `type`.
 */
export const INTEGER_TEXT = 'integerText';

const DECIMAL = /^(0|-?[1-9][0-9]*)$/;

/** ajv coerces any non-empty text that Number() reads, so those are the texts to hold to DECIMAL. */
const looseInteger = (text: unknown) =>
  typeof text === 'string' && text !== '' && Number.isInteger(Number(text)) && !DECIMAL.test(text);

type PropertySchema = { type?: string | string[]; items?: PropertySchema };

const takesIntegers = (schema: PropertySchema | undefined): boolean => {
  if (!schema) return false;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  return types.includes('integer') || (types.includes('array') && takesIntegers(schema.items));
};

const checkIntegerText: SchemaValidateFunction = (_enabled, data, parentSchema) => {
  const properties = (parentSchema as { properties?: Record<string, PropertySchema> }).properties ?? {};
  const errors: Partial<ErrorObject>[] = [];
  for (const [name, value] of Object.entries(data as Record<string, unknown>)) {
    if (!takesIntegers(properties[name])) continue;
    const texts = Array.isArray(value) ? value : [value];
    if (texts.some(looseInteger)) {
      errors.push({
        instancePath: `/${name}`,
        keyword: 'pattern',
        params: { pattern: DECIMAL.source },
        message: 'must be an integer written in decimal digits, without a leading zero',
      });
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
