// A leader-election candidate's record of its callbacks, for the elector tests of the
// leader-election package and of the integration suite (which wrap it around different locks).

/** The callbacks a LeaderElector calls, as {@link LeadershipRecorder} records them. */
export interface RecordingLeaderCallbacks {
  onStartedLeading(signal: AbortSignal): void;
  onStoppedLeading(): void;
  onNewLeader(identity: string): void;
}

/**
 * Records a leader-election candidate's callbacks: `events` (`started`, `stopped`, `leader:<id>`),
 * the times leading started and stopped (its leader signal aborting), and the live leader signal.
 * A test's candidate extends it and passes {@link recordingCallbacks} to its LeaderElector.
 */
export class LeadershipRecorder {
  readonly events: string[] = [];
  readonly startedAt: number[] = [];
  readonly stoppedLeadingAt: number[] = [];
  /** Aborting it stops the candidate's `run`. */
  readonly controller = new AbortController();
  leaderSignal: AbortSignal | undefined;

  /** Currently running `onStartedLeading` with a live signal. */
  get leading(): boolean {
    return this.leaderSignal !== undefined && !this.leaderSignal.aborted;
  }

  /** Callbacks that record into this candidate, with times from `now` (the test's clock). */
  protected recordingCallbacks(now: () => number): RecordingLeaderCallbacks {
    return {
      onStartedLeading: (signal) => {
        this.events.push('started');
        this.startedAt.push(now());
        this.leaderSignal = signal;
        signal.addEventListener('abort', () => this.stoppedLeadingAt.push(now()), { once: true });
      },
      onStoppedLeading: () => void this.events.push('stopped'),
      onNewLeader: (id) => void this.events.push(`leader:${id}`),
    };
  }
}
