/** What each benchmark contender implements. One contender runs per child process. */
export interface Contender {
  /** Starts listing and watching `/api/v1/pods`; resolves once the cache holds the initial list. */
  start(): Promise<void>;
  /** Objects in the cache. */
  size(): number;
  /** How many objects the synced cache holds when the server has `pods` (default: all of them). */
  expectedSize?(pods: number): number;
  /** Called with every watch event that reached the handler. */
  onEvent(cb: () => void): void;
  /** Resolves once the next LIST (after a forced 410) has completed and been applied. */
  nextRelist(): Promise<void>;
  stop(): Promise<void>;
}

export type ContenderFactory = (serverUrl: string) => Contender;
