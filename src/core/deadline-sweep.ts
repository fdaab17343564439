/** Something with a deadline: the sweep calls `due()` once the time has come. */
export interface Due {
  due(): void;
}

/**
 * One timer for every call's deadline, instead of a timer per call: most
 * calls end long before their timeout, so arming and clearing a timer for
 * each was pure cost on the hot path. Entries are kept in a set; the timer
 * is armed for the earliest deadline it knows of, and a sweep ends every
 * entry that is due and re-arms for the next. A removed entry leaves the
 * timer as it is (at worst one early, empty sweep).
 */
export class DeadlineSweep {
  readonly #entries = new Map<Due, number>();
  #timer: NodeJS.Timeout | undefined;
  #armedFor = Infinity;

  /** Calls `entry.due()` at epoch ms `at` (or at once, on the next sweep, when it is past). Replaces an earlier deadline of the same entry. */
  at(entry: Due, at: number): void {
    if (this.#entries.size === 0) this.#timer?.ref();
    this.#entries.set(entry, at);
    if (at < this.#armedFor) this.#arm(at);
  }

  /**
   * The timer stays armed when the last entry goes (calls one after another
   * would otherwise arm and clear it every time); it only stops holding the
   * process open, and its sweep finds nothing to do.
   */
  cancel(entry: Due): void {
    if (this.#entries.delete(entry) && this.#entries.size === 0) this.#timer?.unref();
  }

  #arm(at: number): void {
    clearTimeout(this.#timer);
    this.#armedFor = at;
    this.#timer = setTimeout(sweep, Math.max(0, at - Date.now()), this);
  }

  sweep(): void {
    this.#timer = undefined;
    this.#armedFor = Infinity;
    const now = Date.now();
    const due: Due[] = [];
    let next = Infinity;
    for (const [entry, at] of this.#entries) {
      if (at <= now) due.push(entry);
      else if (at < next) next = at;
    }
    for (const entry of due) this.#entries.delete(entry);
    if (next !== Infinity) this.#arm(next);
    for (const entry of due) entry.due();
  }
}

function sweep(deadlines: DeadlineSweep): void {
  deadlines.sweep();
}

/** The process's one sweep, shared by every runner on this thread. */
export const deadlines = new DeadlineSweep();
