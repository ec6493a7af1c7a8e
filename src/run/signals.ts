// SIGINT, SIGTERM and SIGHUP for the whole of `offhost run`: the first one is remembered (the outcome
// and the exit status follow it), each one is handed to whoever runs the current step (the remote
// session forwards it to the VM), and while the lock is being released they only say "one moment".
export type RunSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

/** Exit statuses of a shell whose command was killed by the signal (what the laptop would have said). */
export const SIGNAL_STATUS: Record<RunSignal, number> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

export class SignalHub {
  first: RunSignal | null = null;
  count = 0;
  private listener: ((sig: RunSignal, count: number) => void) | null = null;
  private readonly handlers: [RunSignal, () => void][];
  constructor(private readonly say: (line: string) => void) {
    this.handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as RunSignal[]).map((sig) => {
      const h = () => this.on(sig);
      process.on(sig, h);
      return [sig, h];
    });
  }
  private on(sig: RunSignal): void {
    this.first ??= sig;
    this.count++;
    if (this.listener) this.listener(sig, this.count);
    else this.say(`${sig} received: stopping before the command starts`);
  }
  /** The current step's handler (null: none; the signal is only remembered). */
  listen(fn: ((sig: RunSignal, count: number) => void) | null): void {
    this.listener = fn;
  }
  get interrupted(): boolean {
    return this.first !== null;
  }
  dispose(): void {
    for (const [sig, h] of this.handlers) process.off(sig, h);
  }
}
