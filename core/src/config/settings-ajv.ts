import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { loadOnFirstUse } from '../load-on-first-use';

/**
 * The validator of the settings read at start-up, the config file's and the plugins' options (defaults
 * applied): one for the process, since ajv compiles its own meta-schema once per instance and each schema
 * once, a good part of the CLI's start-up.
 */
export const settingsAjv = loadOnFirstUse(() => {
  const ajv = new Ajv({ allErrors: true, useDefaults: true });
  addFormats(ajv);
  return ajv;
});
