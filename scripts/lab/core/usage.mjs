// What the engine's commands share to tell a user's mistake from a fault:
// a UsageError is one line on stderr and exit 2 (scripts/lab/cli.mjs).
export class UsageError extends Error {}

// "30s", "2m", "1m30s", "500ms" → seconds.
export function parseDuration(text) {
  const m = /^(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/.exec(String(text));
  if (!m || String(text) === '') throw new UsageError(`bad duration "${text}": use e.g. 30s, 2m or 1m30s`);
  return Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0) + Number(m[3] ?? 0) / 1000;
}
