// TEMPORARY placeholder while `offhost shell` is being built; replaced by its real module.
import { UsageError } from '../../errors.js';
import type { Io } from '../io.js';

export async function run(_args: string[], _io: Io): Promise<number> {
  throw new UsageError('`offhost shell` is not built yet');
}
