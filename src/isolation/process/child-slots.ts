import type { ThreadBudget } from '../worker/thread-budget.ts';

/** Up to `concurrency` calls of one tool that share one worker, and so one token of the budget. */
interface Group {
  members: number;
  /** Settles when the group holds its token. */
  ready: Promise<void>;
  holds: boolean;
}

/**
 * The share of the executor's thread budget that the calls running in one
 * child process hold: one token per worker they fill there (a tool with
 * `concurrency: N` fills one worker per N calls). The child's own pool
 * schedules its workers; the host keeps it to what the budget allows, so
 * the cap holds across trust domains whatever tier they run in.
 */
export class ChildSlots {
  readonly #groups = new Map<string, Group[]>();

  constructor(private readonly budget: ThreadBudget | undefined) {}

  /**
   * Waits until this call may run; resolves to the function that ends it.
   * Rejects with the signal's reason when the call is aborted first.
   */
  async enter(toolKey: string, concurrency: number, signal?: AbortSignal): Promise<() => void> {
    if (!this.budget) return noop;
    const group = this.#join(toolKey, concurrency);
    const leave = () => this.#leave(toolKey, group);
    if (!group.holds) {
      try {
        await abortable(group.ready, signal);
      } catch (error) {
        leave();
        throw error;
      }
    }
    return leave;
  }

  #join(toolKey: string, concurrency: number): Group {
    const groups = this.#groups.get(toolKey) ?? [];
    this.#groups.set(toolKey, groups);
    let group = groups.find((candidate) => candidate.members < concurrency);
    if (!group) {
      const fresh: Group = { members: 0, holds: false, ready: Promise.resolve() };
      fresh.ready = this.budget!.acquire().then(() => {
        fresh.holds = true;
        // Everyone left while the token was on its way: it goes straight back.
        if (fresh.members === 0) this.#release(fresh);
      });
      groups.push(fresh);
      group = fresh;
    }
    group.members++;
    return group;
  }

  #leave(toolKey: string, group: Group): void {
    if (--group.members > 0) return;
    const groups = this.#groups.get(toolKey);
    groups?.splice(groups.indexOf(group), 1);
    if (groups?.length === 0) this.#groups.delete(toolKey);
    if (group.holds) this.#release(group);
  }

  #release(group: Group): void {
    if (!group.holds) return;
    group.holds = false;
    this.budget!.give();
  }
}

function abortable(promise: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      () => (signal.removeEventListener('abort', onAbort), resolve()),
      (error: unknown) => (signal.removeEventListener('abort', onAbort), reject(error)),
    );
  });
}

const noop = () => undefined;
