import path from 'node:path';
import { itGuardsTheSchema } from '@switchboard/core/testing';
import usersProjects from '@switchboard/plugin-users-projects';
import monitor from '../../index';

describe('server-monitor schema guard', () => {
  itGuardsTheSchema({
    namespace: 'server-monitor',
    plugins: [usersProjects, monitor],
    snapshotFile: path.join(__dirname, '../../../../schema-snapshot.json'),
  });
});
