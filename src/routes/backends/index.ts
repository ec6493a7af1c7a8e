import type { Backend, BackendName } from '../types.js';
import { docker } from './docker.js';
import { incus } from './incus.js';
import { lima } from './lima.js';
import { multipass } from './multipass.js';
import { ssh } from './ssh.js';
import { tart } from './tart.js';
import { template } from './template.js';

export const BACKENDS: Record<BackendName, Backend> = { incus, ssh, lima, tart, docker, multipass, template };
