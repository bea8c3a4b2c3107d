/** What the reflector knows about listing: facts that outlive one list-and-watch cycle. */
export interface ListState {
  /** The resourceVersion of the last LIST, streaming list or watch event. */
  lastSyncRV: string;
  /** The last version proved unavailable (410, too large, refused): the next LIST reads at `""`. */
  rvUnavailable: boolean;
  /** An RV="0" LIST came back paginated: the watch cache is off, so every LIST is paginated. */
  paginatedResult: boolean;
  /** The store was populated once. */
  populated: boolean;
}

/** `"0"` for the first list, `""` once the last version proved unavailable, else the last version. */
export function relistResourceVersion(state: ListState): string {
  if (state.rvUnavailable) return '';
  if (state.lastSyncRV === '') return '0';
  return state.lastSyncRV;
}

/** The version a streaming list starts from: `""` when unavailable or unknown, else the last version. */
export function rewatchResourceVersion(state: ListState): string {
  return state.rvUnavailable ? '' : state.lastSyncRV;
}
