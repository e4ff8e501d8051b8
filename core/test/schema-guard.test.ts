import path from 'node:path';
import { itGuardsTheSchema } from '../src/testing';

describe('core schema guard', () => {
  itGuardsTheSchema({
    namespace: 'core',
    plugins: [],
    snapshotFile: path.join(__dirname, '../../schema-snapshot.json'),
  });
});
