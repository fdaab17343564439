import { performance } from 'node:perf_hooks';

/** What of Redis the check needs: PTTL (ioredis's `pttl`). */
export interface TtlReader {
  pttl(key: string): Promise<number>;
}

/**
 * A moment by two clocks. The monotonic one does not run while the machine sleeps (a laptop's suspend), and the wall
 * clock may be set back: a time to live is counted on both, and is over when either says so.
 */
export interface Moment {
  monotonic: number;
  wall: number;
}

const clocks = (): Moment => ({ monotonic: performance.now(), wall: Date.now() });

/** Sessions remembered at most; past it, the ones whose time is up go first, then the oldest. */
const MAX_REMEMBERED = 1_024;
/**
 * How long an answer is trusted at most, whatever time to live it gave: what the worker machine cannot see (a key
 * deleted early, its own clocks stopped while its VM was paused) is seen again within this.
 */
export const TRUSTED_FOR_MS = 1_000;

/**
 * Whether the host that sent a call still waits for it (see
 * CallData.hostSession), asked of Redis once a second per session rather
 * than once per job.
 *
 * A host keeps its session's key alive (SET with PX lostAfterMs, again
 * every lostAfterMs / 8) while it is connected, deletes it when it closes,
 * and lets it expire when it gives up on Redis. So a PTTL of `p` asked at
 * time `t` says the key lives until at least `t + p` (Redis answered after
 * `t`), and so did its host's wait: until then (and at most
 * TRUSTED_FOR_MS), a job of that session may start without asking again.
 * No job starts after the time Redis itself gave its key. What is known
 * is forgotten when the machine's connection to Redis drops (`forget`):
 * Redis may come back from its append-only file after the host gave up.
 */
export class HostSessions {
  /** Session → until when its host is known to wait. */
  readonly #aliveUntil = new Map<string, Moment>();
  /** Questions on their way, so jobs of one session arriving together ask once. */
  readonly #asking = new Map<string, Promise<Answer>>();

  constructor(
    private readonly redis: TtlReader,
    private readonly keyOf: (session: string) => string,
    private readonly now: () => Moment = clocks,
  ) {}

  /**
   * Whether the session's host waits: 'waits', 'gave up' (its key is gone),
   * or 'answered late' (twice the answer came after the time it gave, so it
   * cannot tell); rejects with Redis's error when Redis cannot be asked.
   */
  async waiting(session: string): Promise<HostWait> {
    if (this.#known(session)) return 'waits';
    let answer = await this.#question(session);
    // Its time ran out on the way (a reply held up by a reconnect): the host may well wait still, so ask once more.
    if (answer === 'late') answer = await this.#question(session);
    if (answer === 'late') return 'answered late';
    return answer === 'gone' ? 'gave up' : 'waits';
  }

  /** Forgets every answer: the connection dropped, and Redis may come back with another state. */
  forget(): void {
    this.#aliveUntil.clear();
  }

  #known(session: string): boolean {
    const until = this.#aliveUntil.get(session);
    return until !== undefined && before(this.now(), until);
  }

  /** The answer of the question on its way for this session, or of a new one. */
  #question(session: string): Promise<Verdict> {
    let asking = this.#asking.get(session);
    if (!asking) {
      asking = this.#ask(session).finally(() => this.#asking.delete(session));
      this.#asking.set(session, asking);
    }
    return asking.then((answer) =>
      // Read when it arrives, by each job that waited for it: the time Redis gave counts from the question, so it
      // may be over by now, and a job that joined late is not judged by an earlier moment.
      typeof answer === 'object' ? (before(this.now(), answer) ? 'alive' : 'late') : answer,
    );
  }

  async #ask(session: string): Promise<Answer> {
    const asked = this.now();
    const ttl = await this.redis.pttl(this.keyOf(session));
    this.#aliveUntil.delete(session);
    // -1: the key exists without an expiry (no toolpool host sets one so): it waits, with no time to remember.
    if (ttl === -1) return 'no expiry';
    if (ttl <= 0) return 'gone';
    const trusted = Math.min(ttl, TRUSTED_FOR_MS);
    const until = { monotonic: asked.monotonic + trusted, wall: asked.wall + trusted };
    this.#remember(session, until);
    return until;
  }

  #remember(session: string, until: Moment): void {
    this.#aliveUntil.set(session, until);
    if (this.#aliveUntil.size <= MAX_REMEMBERED) return;
    const now = this.now();
    for (const [name, time] of this.#aliveUntil) if (!before(now, time)) this.#aliveUntil.delete(name);
    // All still alive: the oldest entry goes (its next job asks Redis again).
    if (this.#aliveUntil.size > MAX_REMEMBERED) this.#aliveUntil.delete(this.#aliveUntil.keys().next().value!);
  }
}

function before(now: Moment, until: Moment): boolean {
  return now.monotonic < until.monotonic && now.wall < until.wall;
}

/** What a worker machine learns of a call's host. */
export type HostWait = 'waits' | 'gave up' | 'answered late';

/** What a PTTL said of a session's key: until when it lives, or that it has no expiry, or is gone. */
type Answer = Moment | 'no expiry' | 'gone';
/** An answer as a job reads it when it arrives: the time it gave is still running, or already over. */
type Verdict = 'alive' | 'late' | 'no expiry' | 'gone';
