// The checks `offhost doctor` runs, in order: one entry each, independent of one another (a check that
// cannot look says so in its own items). Add a check by adding an entry here.
import type { DoctorCheck } from './check.js';
import { agentsCheck } from './agents.js';
import { configCheck, huskyCheck, sharedCheck, shimsCheck } from './basics.js';
import { shellCheck, wrapperCheck } from './shells.js';
import { checkoutCheck, locksCheck, routesCheck } from './project.js';

export const CHECKS: readonly DoctorCheck[] = [configCheck, checkoutCheck, routesCheck, agentsCheck, shellCheck, wrapperCheck, shimsCheck, huskyCheck, sharedCheck, locksCheck];
