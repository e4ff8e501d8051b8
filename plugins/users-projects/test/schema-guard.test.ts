import path from 'node:path';
import { itGuardsTheSchema } from '@switchboard/core/testing';
import usersProjects from '../src';

describe('users-projects schema guard', () => {
  itGuardsTheSchema({
    namespace: 'users-projects',
    plugins: [usersProjects],
    snapshotFile: path.join(__dirname, '../../schema-snapshot.json'),
  });
});
