import path from 'node:path';
import { itGuardsTheSchema } from '@switchboard/core/testing';
import campaign from '../..';

describe('campaign schema guard', () => {
  itGuardsTheSchema({
    namespace: 'campaign',
    plugins: [campaign],
    snapshotFile: path.join(__dirname, '../../../../schema-snapshot.json'),
  });
});
