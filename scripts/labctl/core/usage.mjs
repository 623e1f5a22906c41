// What the engine's commands share to tell a user's mistake from a fault:
// a UsageError is one line on stderr and exit 2 (scripts/labctl/cli.mjs).
import { durationSeconds } from '../../../loadgen/lib/values.mjs';

export { durationSeconds };

export class UsageError extends Error {}

// parseDuration TEXT: seconds, as every load tool reads a duration (Go's
// 30s, 2m, 1m30s, 500ms, or bare seconds: loadgen/lib/values.mjs).
export function parseDuration(text) {
  const seconds = durationSeconds(text);
  if (seconds === null) throw new UsageError(`bad duration "${text}": use e.g. 30s, 2m, 1m30s, 500ms or a number of seconds`);
  return seconds;
}
