import type Ajv from 'ajv';
import type { ValidateFunction } from 'ajv';

const compiledBy = new WeakMap<Ajv, Map<string, ValidateFunction>>();

/**
 * ajv's compile, once per schema text and ajv instance. ajv caches by object, but every engine a process opens
 * declares its routes and reads its plugins' settings again, with new objects of the same schemas (a test worker
 * opens hundreds of engines): a compile is 1-20 ms of code generation, a quarter of a test file's CPU.
 */
export function compileOnce(ajv: Ajv, schema: object): ValidateFunction {
  let compiled = compiledBy.get(ajv);
  if (!compiled) compiledBy.set(ajv, (compiled = new Map()));
  const text = JSON.stringify(schema);
  let validate = compiled.get(text);
  if (!validate) compiled.set(text, (validate = ajv.compile(schema)));
  return validate;
}
