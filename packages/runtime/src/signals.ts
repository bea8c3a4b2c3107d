/**
 * An AbortSignal that aborts on the first SIGTERM or SIGINT; a second one exits the process with
 * code 1 (controller-runtime's `SetupSignalHandler`). Pass it to `Manager.start`.
 */
export function setupSignalHandler(): AbortSignal {
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stop.signal.aborted) process.exit(1);
    stop.abort(new Error(`received ${signal}`));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return stop.signal;
}
