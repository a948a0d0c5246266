/**
 * `node dist/src/main/blankCluster.js`: the build's last step (`npm run build`, and `npm start`
 * when it builds). Makes the blank cluster a new DATA_DIR starts from, unless the installed
 * PGlite already made it (src/storage/blankCluster.ts).
 */
import { makeBlankCluster } from '../storage/blankCluster.js';

if ((await makeBlankCluster()) === 'made') console.log('made the blank PGlite cluster that a new DATA_DIR starts from');
