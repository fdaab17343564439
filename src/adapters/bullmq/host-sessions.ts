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

/** Sessions remembered at most; past it, the ones whose time is up go first. */
const MAX_REMEMBERED = 1_024;

/**
 * Whether the host that sent a call still waits for it (see
 * CallData.hostSession), asked of Redis once per session and key lifetime
 * rather than once per job.
 *
 * A host keeps its session's key alive (SET with PX lostAfterMs, again
 * every lostAfterMs / 8) and never deletes it; when it gives up on Redis it
 * stops refreshing it, and the key has expired by then. So a PTTL of `p`
 * asked at time `t` says the key lives until at least `t + p` (Redis
 * answered after `t`), and so did its host's wait: until then, a job of
 * that session may start without asking again. No job starts after the
 * time Redis itself gave its key.
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

  /** True while the session's host waits; throws when Redis cannot be asked. */
  async waiting(session: string): Promise<boolean> {
    if (this.#known(session)) return true;
    let asking = this.#asking.get(session);
    if (!asking) {
      asking = this.#ask(session).finally(() => this.#asking.delete(session));
      this.#asking.set(session, asking);
    }
    // Read after the answer: a job that joined a question already out is judged by the time Redis gave, not by the
    // moment Redis answered, which may be before the job came.
    return (await asking) === 'no expiry' || this.#known(session);
  }

  #known(session: string): boolean {
    const until = this.#aliveUntil.get(session);
    return until !== undefined && before(this.now(), until);
  }

  async #ask(session: string): Promise<Answer> {
    const asked = this.now();
    const ttl = await this.redis.pttl(this.keyOf(session));
    if (ttl > 0) {
      this.#remember(session, { monotonic: asked.monotonic + ttl, wall: asked.wall + ttl });
      return 'expires';
    }
    this.#aliveUntil.delete(session);
    // -1: the key exists without an expiry (no toolpool host sets one so): it waits, with no time to remember.
    return ttl === -1 ? 'no expiry' : 'gone';
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

/** What a PTTL said of a session's key. */
type Answer = 'expires' | 'no expiry' | 'gone';
