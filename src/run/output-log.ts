// The run's output log (output.log in its run folder): what the command printed, written as it comes, in
// order, off the event loop (one fs.write at a time, the chunks that came meanwhile joined). It is not
// fs.createWriteStream because loading Node's stream module for it cost every run 3 ms, on its critical
// path (docs/RUN.md, "Figures"). A write that fails (a full disk) stops the log, never the run: the reason
// is kept for the run to say, and end() still calls back.
import { close, openSync, write } from 'node:fs';

export class OutputLog {
  private readonly fd: number;
  private pending: Buffer[] = [];
  private writing = false;
  private ended: (() => void) | null = null;
  private closed = false;
  /** Why the log stopped being written (the first write error), or null. */
  failure: string | null = null;

  /** Creates (or empties) `file`; throws as openSync does when it cannot. */
  constructor(readonly file: string) {
    this.fd = openSync(file, 'w');
  }

  write(chunk: Buffer | string): void {
    if (this.closed || this.ended || this.failure !== null) return;
    this.pending.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
    this.pump();
  }

  /** Calls `done` once everything written before it is on disk (or the log has failed), the file closed. */
  end(done: () => void): void {
    if (this.closed) {
      done();
      return;
    }
    const before = this.ended;
    this.ended = before ? () => (before(), done()) : done;
    this.pump();
  }

  private pump(): void {
    if (this.writing || this.closed) return;
    if (this.pending.length === 0 || this.failure !== null) {
      if (this.ended) this.close();
      return;
    }
    const buf = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
    this.pending = [];
    this.writing = true;
    this.writeFrom(buf, 0);
  }

  private writeFrom(buf: Buffer, offset: number): void {
    write(this.fd, buf, offset, buf.length - offset, null, (err, n) => {
      if (err) {
        this.failure = err.message;
        this.pending = [];
      } else if (offset + n < buf.length) {
        this.writeFrom(buf, offset + n);
        return;
      }
      this.writing = false;
      this.pump();
    });
  }

  private close(): void {
    this.closed = true;
    const done = this.ended!;
    this.ended = null;
    close(this.fd, () => done());
  }
}
